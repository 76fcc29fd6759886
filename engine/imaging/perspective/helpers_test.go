package perspective

import (
	_ "image/jpeg"
	_ "image/png"

	"github.com/porchlight/porchlight/internal/imagingtest"
)

var loadPhoto = imagingtest.LoadPhoto

// medianTilt is the package's tilt measure (MedianTilt).
var medianTilt = MedianTilt
