package lens

import "testing"

func TestDecide(t *testing.T) {
	for _, c := range []struct {
		o    Origin
		want bool
	}{
		{Origin{Raw: true, Software: "Adobe Lightroom"}, true},
		{Origin{Software: "Capture One Macintosh", CreatorTool: "Capture One Macintosh"}, false},
		{Origin{CreatorTool: "Adobe Photoshop Lightroom Classic 13.1 (Windows)"}, false},
		{Origin{CreatorTool: "Adobe Photoshop Lightroom Classic 13.1 (Windows)", LensProfile: "0"}, true},
		{Origin{CreatorTool: "Adobe Photoshop Camera Raw 16.0", LensProfile: "1"}, false},
		{Origin{Software: "darktable 4.6.1"}, false},
		{Origin{Software: "DxO PhotoLab 7"}, false},
		{Origin{Software: "Canon EOS 5D Mark IV Firmware 1.2.0", CameraCorrected: "Canon DistortionCorrectionSetting"}, false},
		{Origin{Software: "ILCE-7M3 v3.01"}, true},
		{Origin{}, true},
	} {
		got, why := Decide(c.o)
		if got != c.want {
			t.Errorf("%+v: correct=%v (%s), want %v", c.o, got, why, c.want)
		}
	}
}
