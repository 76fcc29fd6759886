package lens

import (
	"errors"
	"testing"
)

func needDB(t testing.TB) {
	t.Helper()
	if !Available() {
		t.Skip("the lensfun database is not installed (liblensfun-data-v1)")
	}
}

// Lenses real-estate photographers use, on cameras they are used on, at their wide
// end: each must match a calibrated profile.
var estateLenses = []struct {
	name string
	shot Shot
}{
	{"canon_ef_16-35_f4l", Shot{Make: "Canon", Model: "Canon EOS 5D Mark III", LensModel: "EF16-35mm f/4L IS USM", Focal: 16, Aperture: 8}},
	{"canon_efs_10-18", Shot{Make: "Canon", Model: "Canon EOS 80D", LensModel: "EF-S10-18mm f/4.5-5.6 IS STM", Focal: 10, Aperture: 6.3}},
	{"sony_fe_12-24_f4g", Shot{Make: "SONY", Model: "ILCE-7M3", LensMake: "Sony", LensModel: "FE 12-24mm F4 G", Focal: 12, Aperture: 8}},
	{"nikon_afs_14-24_f28g", Shot{Make: "NIKON CORPORATION", Model: "NIKON D750", LensModel: "AF-S Zoom-Nikkor 14-24mm f/2.8G ED", Focal: 14, Aperture: 8}},
	{"tokina_11-16", Shot{Make: "NIKON CORPORATION", Model: "NIKON D7200", LensModel: "Tokina AT-X 116 PRO DX 11-16mm f/2.8", Focal: 11, Aperture: 8}},
	{"nikon_z_14-30", Shot{Make: "NIKON CORPORATION", Model: "NIKON Z 6_2", LensMake: "NIKON", LensModel: "NIKKOR Z 14-30mm f/4 S", Focal: 14, Aperture: 7.1}},
}

func TestMatchCalibratedLenses(t *testing.T) {
	needDB(t)
	for _, l := range estateLenses {
		c, err := Prepare(l.shot, 600, 400)
		if err != nil {
			t.Errorf("%s: %v", l.name, err)
			continue
		}
		t.Logf("%s: %s", l.name, c.Describe())
	}
}

func TestUncalibratedOrUnknownLens(t *testing.T) {
	needDB(t)
	for _, s := range []Shot{
		{Make: "Canon", Model: "Canon EOS 5D Mark II", LensModel: "8mm", Focal: 8, Aperture: 5.6},
		{Make: "Canon", Model: "Canon EOS 5D Mark II", Focal: 8, Aperture: 5.6},
		{Make: "Canon", Model: "Canon EOS 5D Mark II", LensModel: "EF16-35mm f/4L IS USM", Aperture: 5.6},
	} {
		_, err := Prepare(s, 600, 400)
		var np *NoProfileError
		if !errors.As(err, &np) {
			t.Errorf("%+v: got %v, want no profile", s, err)
			continue
		}
		t.Logf("%+v: %v", s, err)
	}
}
