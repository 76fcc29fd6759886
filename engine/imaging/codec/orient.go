package codec

import "github.com/porchlight/porchlight/engine/imaging"

// Orient returns img transformed by EXIF orientation o (1-8) so that it displays
// upright; orientation 1 (or any value out of range) returns img itself.
//
//	2 mirror horizontally   5 transpose (mirror + rotate 270 CW)
//	3 rotate 180            6 rotate 90 CW
//	4 mirror vertically     7 transverse (mirror + rotate 90 CW)
//	                        8 rotate 270 CW
func Orient(img *imaging.Image, o int) *imaging.Image {
	if o < 2 || o > 8 {
		return img
	}
	sw, sh, c := img.W(), img.H(), img.C
	dw, dh := sw, sh
	if o >= 5 {
		dw, dh = sh, sw
	}
	dst := imaging.New(dw, dh, c)
	// For destination pixel (x, y) the source is (x0 + x*dxx + y*dxy, y0 + x*dyx + y*dyy).
	var x0, y0, dxx, dxy, dyx, dyy int
	switch o {
	case 2:
		x0, dxx, dyy = sw-1, -1, 1
	case 3:
		x0, y0, dxx, dyy = sw-1, sh-1, -1, -1
	case 4:
		y0, dxx, dyy = sh-1, 1, -1
	case 5:
		dxy, dyx = 1, 1
	case 6:
		y0, dxy, dyx = sh-1, 1, -1
	case 7:
		x0, y0, dxy, dyx = sw-1, sh-1, -1, -1
	case 8:
		x0, dxy, dyx = sw-1, -1, 1
	}
	step := dxx*c + dyx*img.Stride // source index step per destination x
	imaging.Bands(dh, func(_, ya, yb int) {
		for y := ya; y < yb; y++ {
			out := dst.Row(y)
			si := (y0+y*dyy)*img.Stride + (x0+y*dxy)*c
			for x := 0; x < dw; x++ {
				copy(out[x*c:x*c+c], img.Pix[si:si+c])
				si += step
			}
		}
	})
	return dst
}
