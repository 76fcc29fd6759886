// Package inpaint is the built-in magic eraser: exemplar-based inpainting that fills a
// masked region of a photo with texture taken from the rest of the same photo, in the
// manner of Wexler, Shechtman and Irani ("Space-Time Completion of Video", 2007) with
// PatchMatch nearest-neighbour search (Barnes et al., 2009) and the texture features of
// Newson et al. (2014).
//
// Erase works coarse to fine over an image pyramid of a region around the hole. At the
// coarsest level the hole is filled smoothly from its border (onion peel, then Laplace
// smoothing), which fixes the low frequencies. At every level, expectation-maximisation
// alternates between
//
//   - nearest-neighbour search: every 7×7 patch that overlaps the hole is matched to a
//     fully known patch by PatchMatch (propagation and random search, seeded), with the
//     distance measured on sRGB-encoded colour plus the local mean absolute gradient
//     (which tells flat areas from textured ones even at coarse levels where the texture
//     itself is gone), and
//   - voting: every hole pixel becomes the mean of the pixels that the patches covering
//     it point to, weighted by how well each patch matched.
//
// The field found at one level is upsampled to start the next, so the finest level only
// refines it; its vote copies full-resolution pixels, so the fill has real detail. The
// pixel data stays linear float32; only distances use the perceptual encoding.
//
// Mask rules: the mask is a one-channel image where a value above 0.5 marks a pixel to
// erase. A mask of a different size is resized to the image by nearest neighbour when
// the two aspect ratios agree within 1%; otherwise Erase fails with ErrMaskAspect. A
// mask that marks nothing fails with ErrEmptyMask, and one that marks more than
// MaxHoleFraction of the image, or leaves too little intact photo to copy from, fails
// with ErrMaskTooLarge. The hole is grown by a few pixels (anti-aliased object edges and
// halos usually lie just outside a hand-drawn mask) and the result is blended with the
// input over a thin ring inside that grown region only: pixels outside it are returned
// exactly as they were, pixels of the mask itself are entirely synthesised.
//
// The same image, mask and seed give the same pixels whatever the number of CPUs: the
// search runs in fixed row bands, even bands then odd ones, each with its own random
// stream.
package inpaint
