package backends

import "testing"

func TestRoomFromCaption(t *testing.T) {
	for caption, want := range map[string]string{
		"a bedroom with a large bed and a window":                       "bedroom",
		"a living room with a couch and a desk":                         "living_room",
		"a room with a couch, a coffee table and a fireplace":           "living_room",
		"a kitchen with white cabinets and a stove":                     "kitchen",
		"a white toilet sitting next to a shower":                       "bathroom",
		"a child's bedroom with toys on the floor":                      "child_room",
		"a dining room table with chairs":                               "dining_room",
		"a desk with a computer monitor on it":                          "office",
		"a patio with chairs and a table":                               "terrace",
		"an empty room with wooden floors":                              "",
		"Arafed view of a BEDROOM, with two beds and a lamp, 4k, photo": "bedroom",
	} {
		if got := RoomFromCaption(caption); got != want {
			t.Errorf("%q: %q, want %q", caption, got, want)
		}
	}
}
