// Package plainlocale maps the POSIX "C" locale to plain English before the GUI
// toolkit reads it at start-up: Fyne cannot parse "C" and would log an error on
// every run of a headless command. Imported first (blank) by the main package; it
// depends only on os, so it initialises before the toolkit's language packages.
package plainlocale

import "os"

func init() {
	for _, v := range []string{"LC_ALL", "LC_MESSAGES", "LANG"} {
		switch os.Getenv(v) {
		case "":
			continue
		case "C", "POSIX", "C.UTF-8", "C.utf8":
			os.Setenv(v, "en_US.UTF-8")
		}
		return
	}
	os.Setenv("LANG", "en_US.UTF-8")
}
