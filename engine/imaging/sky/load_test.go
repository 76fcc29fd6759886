package sky

import (
	"image/color"
	_ "image/jpeg" // the test photos
	_ "image/png"  // and the ground-truth masks
)

func nrgba(r, g, b uint8) color.NRGBA { return color.NRGBA{r, g, b, 255} }
