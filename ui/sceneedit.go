package ui

import (
	"fmt"
	"slices"
	"strings"

	"github.com/porchlight/porchlight/engine"
)

// Rename gives scene id a new name, unique in the shoot (a taken name gets a
// number). Any scene can be renamed: the name is what its photo is delivered as.
func (sh *Shoot) Rename(id int, name string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return "", fmt.Errorf("a scene needs a name")
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.readOnly {
		return "", errReadOnly
	}
	i := sh.indexLocked(id)
	if i < 0 {
		return "", fmt.Errorf("scene %d is not in the shoot", id)
	}
	s := sh.scenes[i]
	if s.Name == name {
		return name, nil
	}
	s.Name = "" // its own name is free for it to keep
	s.Name = sh.uniqueNameLocked(name)
	sh.changed()
	return s.Name, nil
}

// MergeScenes joins the scenes ids, wherever they are in the list, into the first of
// them in list order: their brackets follow in list order and the others leave the
// list. Every one must be a draft never processed, and together they hold at most
// engine.MaxBrackets brackets.
func (sh *Shoot) MergeScenes(ids []int) (int, error) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	type at struct {
		s *Scene
		i int
	}
	var parts []at
	seen := map[int]bool{}
	n := 0
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		s, i, err := sh.draftLocked(id)
		if err != nil {
			return 0, err
		}
		if len(s.Versions) > 0 {
			return 0, fmt.Errorf("%s was processed before; its brackets stay as they were", s.Name)
		}
		parts = append(parts, at{s, i})
		n += len(s.Files)
	}
	if len(parts) < 2 {
		return 0, fmt.Errorf("choose at least two scenes to merge")
	}
	if n > engine.MaxBrackets {
		return 0, fmt.Errorf("a scene takes at most %d brackets; these scenes together have %d", engine.MaxBrackets, n)
	}
	slices.SortFunc(parts, func(a, b at) int { return a.i - b.i })
	into := parts[0].s
	gone := map[*Scene]bool{}
	for _, p := range parts[1:] {
		into.Files = append(into.Files, p.s.Files...)
		if into.Warning == "" {
			into.Warning = p.s.Warning
		}
		gone[p.s] = true
		delete(sh.byID, p.s.ID)
	}
	sh.scenes = slices.DeleteFunc(sh.scenes, func(s *Scene) bool { return gone[s] })
	sh.changed()
	return into.ID, nil
}

// MoveTo puts scene id at place index of the list (clamped to it), as dragging a
// scene to a new place does.
func (sh *Shoot) MoveTo(id, index int) error {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.readOnly {
		return errReadOnly
	}
	i := sh.indexLocked(id)
	if i < 0 {
		return fmt.Errorf("scene %d is not in the shoot", id)
	}
	j := min(max(index, 0), len(sh.scenes)-1)
	if i == j {
		return nil
	}
	s := sh.scenes[i]
	sh.scenes = slices.Delete(sh.scenes, i, i+1)
	sh.scenes = slices.Insert(sh.scenes, j, s)
	sh.changed()
	return nil
}

// Delete removes scene id and returns what puts it back where it was, with its
// versions, for an undo. Deleting never touches the engine's orders or the photos.
func (sh *Shoot) Delete(id int) (undo func(), err error) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.readOnly {
		return nil, errReadOnly
	}
	i := sh.indexLocked(id)
	if i < 0 {
		return nil, fmt.Errorf("scene %d is not in the shoot", id)
	}
	s := sh.scenes[i]
	sh.scenes = slices.Delete(sh.scenes, i, i+1)
	delete(sh.byID, id)
	sh.forgetOrdersLocked(s)
	sh.changed()
	return func() {
		sh.mu.Lock()
		defer sh.mu.Unlock()
		if _, back := sh.byID[s.ID]; back {
			return
		}
		s.Name = sh.uniqueNameLocked(s.Name)
		sh.scenes = slices.Insert(sh.scenes, min(i, len(sh.scenes)), s)
		sh.byID[s.ID] = s
		for _, v := range s.Versions {
			if v.OrderID != "" {
				sh.byOrder[v.OrderID] = s
			}
		}
		sh.changed()
	}, nil
}
