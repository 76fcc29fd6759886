package lens

import (
	"fmt"
	"strings"
)

// Origin is what a file says about where its pixels come from, for deciding whether
// the lens was corrected already.
type Origin struct {
	Raw         bool   // developed here from a camera RAW (LibRaw applies no lens correction)
	Software    string // EXIF Software
	CreatorTool string // XMP xmp:CreatorTool
	LensProfile string // XMP crs:LensProfileEnable: "0" when Lightroom/Camera Raw applied no profile
	// CameraCorrected names the maker-note setting that says the camera corrected
	// distortion, "" when none does.
	CameraCorrected string
}

// developers are raw developers that correct lenses from their own profiles (by
// default or as the photographer chose): a file they exported is taken as corrected.
var developers = []struct{ match, name string }{
	{"lightroom", "Lightroom"},
	{"camera raw", "Camera Raw"},
	{"capture one", "Capture One"},
	{"darktable", "darktable"},
	{"dxo", "DxO"},
	{"rawtherapee", "RawTherapee"},
	{"on1 photo", "ON1 Photo RAW"},
	{"luminar", "Luminar"},
	{"silkypix", "SILKYPIX"},
	{"nx studio", "NX Studio"},
	{"capture nx", "Capture NX"},
	{"digital photo professional", "Digital Photo Professional"},
	{"exposure x", "Exposure X"},
}

// Developer names the raw developer that wrote the file, "" when none of the known
// ones did.
func (o Origin) Developer() string {
	for _, s := range []string{o.CreatorTool, o.Software} {
		ls := strings.ToLower(s)
		for _, d := range developers {
			if strings.Contains(ls, d.match) {
				return d.name
			}
		}
	}
	return ""
}

// Decide says whether a file's pixels still need the lens corrected, and why, in
// words for the order's notes. The rule is never to correct twice: a RAW developed
// here is uncorrected; a raw developer's export or a camera file whose maker notes
// say distortion was corrected is left alone, unless its XMP says no lens profile was
// applied.
func Decide(o Origin) (bool, string) {
	if o.Raw {
		return true, "a camera RAW, developed without lens correction"
	}
	noProfile := o.LensProfile == "0"
	if dev := o.Developer(); dev != "" {
		if noProfile {
			return true, fmt.Sprintf("exported by %s with no lens profile applied (crs:LensProfileEnable=0)", dev)
		}
		return false, fmt.Sprintf("exported by %s, a raw developer that corrects the lens itself; left as it is", dev)
	}
	if o.CameraCorrected != "" {
		if noProfile {
			return true, "no lens profile applied, as its XMP says (crs:LensProfileEnable=0)"
		}
		return false, fmt.Sprintf("the camera corrected distortion already (maker notes: %s); left as it is", o.CameraCorrected)
	}
	return true, "no correction recorded by the camera or a raw developer"
}
