// Package quality measures images: plain SSIM, MEF-SSIM of an exposure fusion against
// its source brackets (Ma, Zeng and Wang, IEEE TIP 2015), residual misalignment between
// two images by sub-pixel phase correlation of their gradients, and the tilt of
// near-vertical lines found by a line segment detector that perspective correction
// reuses.
//
// Metrics work on luma of the sRGB-encoded image (Rec. 601 weights, 0..255, as
// MATLAB's rgb2gray does), in float64. The alignment measurement is deliberately a
// different method from the one engine/imaging/align uses, so it can judge it.
package quality
