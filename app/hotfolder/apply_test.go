package hotfolder

import (
	"errors"
	"slices"
	"testing"
	"time"
)

// Apply changes the running folders at once: an added folder takes the next
// photo, an edited one delivers to its new output, a removed one is gone; a folder
// with scenes in flight is left as it is until they are done.
func TestApplyStartsAddedAndEditedFoldersAtOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	first := folderConfig(t, "first")
	svc := e.start(first)

	second := folderConfig(t, "second")
	if err := svc.Apply([]Config{first, second}); err != nil {
		t.Fatal(err)
	}
	drop(t, second.Input, "bedroom.jpg", readPhoto(t, photoBedroom...))
	waitFor(t, time.Minute, "the added folder to deliver", func() bool {
		return slices.Contains(outputs(t, second.Output), "bedroom.jpg")
	})

	edited := second
	edited.Output = t.TempDir()
	var err error
	waitFor(t, time.Minute, "the edit to apply once the scene is done", func() bool {
		err = svc.Apply([]Config{first, edited})
		return !errors.Is(err, ErrBusy)
	})
	if err != nil {
		t.Fatal(err)
	}
	drop(t, second.Input, "kitchen.jpg", readPhoto(t, photoKitchen...))
	waitFor(t, time.Minute, "the edited folder to deliver to its new output", func() bool {
		return slices.Contains(outputs(t, edited.Output), "kitchen.jpg")
	})
	// The file is in place a moment before the scene is counted done.
	waitFor(t, time.Minute, "the edited folder to count both scenes done", func() bool {
		st := e.status("second")
		return st.Done == 2 || st.Done+st.Processing+st.Pending < 2
	})
	if st := e.status("second"); st.Done != 2 {
		t.Fatalf("the edited folder's counts did not carry over: %+v", st)
	}

	waitFor(t, time.Minute, "the removal to apply", func() bool {
		err = svc.Apply([]Config{edited})
		return !errors.Is(err, ErrBusy)
	})
	if err != nil {
		t.Fatal(err)
	}
	if st := svc.Status(); len(st) != 1 || st[0].Name != "second" {
		t.Fatalf("after removing first: %+v", st)
	}
	if err := svc.Apply([]Config{edited, edited}); err == nil {
		t.Fatal("two folders of one name were applied")
	}
}
