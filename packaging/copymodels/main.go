// Command copymodels copies the OpenCV cascades that Porchlight's privacy detector
// loads (privacy.ModelFiles) from an OpenCV data folder into a models folder, keeping
// the haarcascades/ and lbpcascades/ subfolders, so that packages ship exactly the
// files the program looks for.
//
//	go run ./packaging/copymodels [-from /usr/share/opencv4] -to DIR
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/porchlight/porchlight/engine/imaging/privacy"
)

func main() {
	from := flag.String("from", "/usr/share/opencv4", "OpenCV data folder holding haarcascades/ and lbpcascades/")
	to := flag.String("to", "", "models folder to fill (created when missing)")
	flag.Parse()
	if *to == "" || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: copymodels [-from DIR] -to DIR")
		os.Exit(2)
	}
	if err := copyModels(*from, *to, privacy.ModelFiles()); err != nil {
		fmt.Fprintln(os.Stderr, "copymodels:", err)
		os.Exit(1)
	}
}

// copyModels copies every rel path from from to to. Every file is checked before
// anything is written, so a missing model leaves no half-filled folder behind.
func copyModels(from, to string, rels []string) error {
	for _, rel := range rels {
		if st, err := os.Stat(filepath.Join(from, rel)); err != nil || !st.Mode().IsRegular() {
			return fmt.Errorf("model %s is not in %s (install the opencv-data package or pass -from)", rel, from)
		}
	}
	for _, rel := range rels {
		if err := copyFile(filepath.Join(from, rel), filepath.Join(to, rel)); err != nil {
			return err
		}
	}
	return nil
}

// copyFile writes dst through a temporary file that is synced and renamed.
func copyFile(src, dst string) (err error) {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".model-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = io.Copy(tmp, in); err != nil {
		return fmt.Errorf("copy %s: %w", src, err)
	}
	if err = tmp.Chmod(0o644); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp.Name(), dst); err != nil {
		return fmt.Errorf("install %s: %w", dst, err)
	}
	return nil
}
