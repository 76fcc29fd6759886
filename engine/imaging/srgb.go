package imaging

import "math"

// SRGBToLinear decodes one sRGB-encoded value in 0..1.
func SRGBToLinear(v float32) float32 {
	if v <= 0.04045 {
		return v / 12.92
	}
	return float32(math.Pow((float64(v)+0.055)/1.055, 2.4))
}

// LinearToSRGB encodes one linear value to sRGB, clamping to 0..1.
func LinearToSRGB(v float32) float32 {
	if v <= 0 {
		return 0
	}
	if v >= 1 {
		return 1
	}
	if v <= 0.0031308 {
		return v * 12.92
	}
	return float32(1.055*math.Pow(float64(v), 1/2.4) - 0.055)
}

// decode8 and decode16 are lookup tables from 8- and 16-bit sRGB codes to linear.
var decode8 = func() (t [256]float32) {
	for i := range t {
		t[i] = SRGBToLinear(float32(i) / 255)
	}
	return
}()

var decode16 = func() []float32 {
	t := make([]float32, 65536)
	for i := range t {
		t[i] = SRGBToLinear(float32(i) / 65535)
	}
	return t
}()

// Decode8 maps an 8-bit sRGB code to linear light.
func Decode8(v uint8) float32 { return decode8[v] }

// Decode16 maps a 16-bit sRGB code to linear light.
func Decode16(v uint16) float32 { return decode16[v] }

// encodeLUTSize is the resolution of the linear -> sRGB table: 16384 steps keep 8-bit
// output within a quarter code everywhere (sRGB is steepest near black).
const encodeLUTSize = 1 << 14

var encodeLUT = func() []uint16 {
	t := make([]uint16, encodeLUTSize+1)
	for i := range t {
		t[i] = uint16(LinearToSRGB(float32(i)/encodeLUTSize)*65535 + 0.5)
	}
	return t
}()

// Encode16 maps linear light to a 16-bit sRGB code, clamping.
func Encode16(v float32) uint16 {
	if !(v > 0) { // also catches NaN
		return 0
	}
	if v >= 1 {
		return 65535
	}
	return encodeLUT[int(v*encodeLUTSize+0.5)]
}

// Encode8 maps linear light to an 8-bit sRGB code, clamping.
func Encode8(v float32) uint8 {
	return uint8((uint32(Encode16(v))*255 + 32767) / 65535)
}
