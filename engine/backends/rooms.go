package backends

import (
	"regexp"
	"strings"
)

// roomWords are, per room type, the words that name the room and the things that
// give it away. Names are looked for first, in this order (a caption of a nursery may
// say "bedroom" too), then things.
var roomWords = []struct {
	room          string
	names, things []string
}{
	{"child_room", []string{"nursery", "kids room", "kid's room", "kids bedroom", "children's room", "children's bedroom",
		"child's room", "child's bedroom", "playroom"}, []string{"crib", "bunk bed", "toys", "teddy bear"}},
	{"bathroom", []string{"bathroom", "bath room", "restroom", "washroom"}, []string{"shower", "bathtub", "bath tub", "toilet", "washbasin"}},
	{"kitchen", []string{"kitchen", "kitchenette"}, []string{"stove", "oven", "refrigerator", "fridge", "cooktop", "range hood", "dishwasher"}},
	{"dining_room", []string{"dining room", "dining area", "dining hall"}, []string{"dining table", "dinner table"}},
	{"office", []string{"home office", "office", "study"}, []string{"desk", "workspace", "computer", "monitor"}},
	{"terrace", []string{"terrace", "patio", "balcony", "deck", "veranda", "porch", "rooftop"}, []string{"garden furniture", "parasol"}},
	{"bedroom", []string{"bedroom", "bed room"}, []string{"bed", "headboard", "nightstand", "pillows"}},
	{"living_room", []string{"living room", "lounge", "sitting room", "family room"}, []string{"couch", "sofa", "armchair", "fireplace", "tv", "television", "coffee table"}},
}

var wordRE = regexp.MustCompile(`[a-z']+`)

// RoomFromCaption reads a room type from an image caption ("a bedroom with a large
// bed and a window"), "" when the caption names no room and shows nothing telling.
func RoomFromCaption(caption string) string {
	text := " " + strings.Join(wordRE.FindAllString(strings.ToLower(caption), -1), " ") + " "
	has := func(w string) bool { return strings.Contains(text, " "+w+" ") || strings.Contains(text, " "+w+"s ") }
	for _, pass := range []func(i int) []string{
		func(i int) []string { return roomWords[i].names },
		func(i int) []string { return roomWords[i].things },
	} {
		for i, r := range roomWords {
			for _, w := range pass(i) {
				if has(w) {
					return r.room
				}
			}
		}
	}
	return ""
}
