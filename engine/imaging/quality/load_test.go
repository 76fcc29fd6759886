package quality

import (
	_ "image/jpeg"
	_ "image/png"

	"github.com/porchlight/porchlight/internal/imagingtest"
)

var loadPhoto = imagingtest.LoadPhoto

var shrink = imagingtest.Shrink
