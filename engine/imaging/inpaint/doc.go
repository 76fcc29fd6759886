// Package inpaint is the built-in magic eraser (recipe magic_eraser 4.2.0):
// exemplar-based inpainting that fills a masked region of a photo with texture copied
// from the rest of the same photo, in the manner of Wexler, Shechtman and Irani
// ("Space-Time Completion of Video", 2007) with PatchMatch nearest-neighbour search
// (Barnes et al., 2009) at every scale, the texture features of Newson et al. (2014),
// the structure-first fill order of Criminisi, Pérez and Toyama (2004) and
// gradient-domain blending at the seam (Pérez et al., 2003).
//
// Erase works coarse to fine over an image pyramid of a region around the hole (the
// hole's bounding box plus a margin of 40% of its size). Halving keeps a pixel known
// when most of its children are, so the hole's border stays where it is at every
// level. At the coarsest level, where the hole is a few pixels deep, the hole is
// grown from its border inwards, structure first: the next pixel filled is the one
// whose patch is most confidently known and which the strongest edge reaches, so
// edges and lines running into the hole (cabinet fronts, floorboards, rooflines,
// fence rails) are continued across it before the flat areas close over them. Each
// pixel is copied from the source patch that best matches what is known or already
// filled around it. Then, at every level, expectation-maximisation alternates
// between
//
//   - nearest-neighbour search: every 7×7 patch that overlaps the hole is matched to a
//     fully known patch by PatchMatch (propagation and random search, seeded). The
//     distance compares sRGB-encoded colour and, at coarse levels, the local mean
//     absolute gradient measured at full resolution (which tells a flat wall from a
//     busy one where the texture itself is gone); known pixels of a patch count eight
//     times as much as the hole's current guess, so edges line up where they meet the
//     photo; and a locality penalty, growing with the square of the distance in units
//     of the hole's radius, makes what lies around the hole preferred to a slightly
//     better match from across the photo (the fill otherwise turns into a collage);
//     and a source that continues its neighbours' shifts is preferred to one that
//     matches a shade better, so the field keeps runs of one shift that copy the
//     photo's texture whole instead of the same few pixels over and over;
//   - completion: at coarse levels every hole pixel becomes the mean of the pixels
//     that the patches covering it point to, weighted by how well each patch matched
//     and by how near the photo it lies (Wexler's spatial confidence), which lets the
//     layout settle; at full resolution it is copied from the most coherent patch
//     instead, the shift that the most (and best-matching) of the patches over it
//     share, so that runs of the photo are copied whole with their texture rather
//     than averaged into a smear.
//
// The field found at one level is upsampled to start the next. The coarse levels,
// cheap and decisive for the structure, iterate several times; the two finest, which
// hold most of the pixels, once, and search only near the photo, where the fill must
// line up with it (within 4 px at full resolution, 16 level pixels at half size);
// deeper, the upsampled field is kept and copied as it is. Then the fill is blended
// into the photo as in seamless cloning: the difference between the photo and the
// fill's own prediction along the border, pixel by pixel, is interpolated
// harmonically across the hole (multigrid Gauss-Seidel) and added, in encoded (sRGB)
// values as seamless cloning of an 8-bit photo does, so the fill takes the
// surrounding colour and light and meets the photo without a step while keeping the
// contrast the eye sees in its texture; within the first pixels its low frequencies
// lean towards the harmonic continuation of the photo, which the same multigrid
// solve gives. Last, the first pixels of the hole (the growth and three pixels of
// the mask, wholly at the first two, by half at the third) take the luma of a
// frequency-selective extrapolation of the photo (Seiler and Kaup, 2010): per 4×4
// stretch of the border, a 32×32 window of encoded luma, weighted by 0.7 a pixel
// from the stretch's centre and by how surely each pixel is photo, is modelled by
// 50 to 150 conjugate pairs of DFT basis functions (more the busier the window),
// each the pair that most reduces the weighted residual (low frequencies favoured),
// and the model is kept within the range of the photo right beside each pixel. A copied patch can be a line or a
// shade off a pixel in; the extrapolation carries the photo's edges and shading
// across the border, and the copied texture takes over behind it. Pixel data stays linear float32; only distances, the colour offsets and
// the extrapolation use the perceptual encoding. Last, straight lines that run into
// the hole on one side and out of it on the other (a cabinet's door gap, a window
// frame, a counter's edge: on a full-size photo a few pixels wide, gone at the
// coarse levels that lay the fill out, so the fill stops them a few pixels in) are
// found in a ring around the hole by a Hough transform, confirmed on both sides and
// drawn across it from the photo's profile at each end, wherever the fill beside
// them agrees with what lies beside the line (lines.go). With Options.InPlace the
// fill is written into the photo itself, sparing a full-size copy.
//
// Mask rules: the mask is a one-channel image where a value above 0.5 marks a pixel to
// erase. A mask of a different size is resized to the image by nearest neighbour when
// the two aspect ratios agree within 1%; otherwise Erase fails with ErrMaskAspect. A
// mask that marks nothing fails with ErrEmptyMask, and one that marks more than
// MaxHoleFraction of the image, or leaves fewer than 64 intact 7×7 patches near the
// hole, fails with ErrMaskTooLarge. The hole is grown by 1 + (long side)/1500 pixels
// (soft object edges and halos usually lie just outside a drawn mask) and filled; the
// mask is replaced outright, and each pixel of the growth in proportion to how much
// of the object's colour it holds beyond the photo's own variation there (a linear
// matte against the mask's and the surrounding photo's mean colours), faded over the
// outer (growth/2) pixels. Pixels outside the grown hole are returned exactly as
// they were.
//
// The same image, mask and seed give the same pixels whatever the number of CPUs: the
// search runs in fixed row bands, even bands then odd ones, each with its own random
// stream, and votes are gathered per pixel.
//
// Quality and speed (make bench-eraser, TestEraserTargets): on 15 synthetic blob
// holes of 3, 8 and 15% in five photos, halved, the fill scores a mean seam of 0.18
// against 0.37 (Telea), 0.36 (Navier-Stokes), 0.64 (xphoto shift-map), 0.56 (G'MIC
// patch inpainting) and 0.21 (xphoto FSR_BEST; ours is better on 13 of the 15), a
// histogram distance to the surround of 0.15 against 0.21 to 0.31, and keeps 0.95
// of the hidden truth's gradient (0.71 to 1.20 a case) where diffusion keeps 0.35
// (an SSIM of 0.36 against 0.35 for shift-map and 0.28 for G'MIC); on 16 object
// removals its gradient is 1.07 of the surround's. On 42 random boxes over four
// 12 MP kitchens and five 1 MP rooms and fronts, the straight-line step drew on 13
// and raised their mean hole SSIM from 0.669 to 0.689, better on 13 and worse on
// none (TestLinesOnPhotos). On two cores a 1 MP photo with an 8% hole takes about
// 0.11 s and a 12 MP one about 0.8 s (BenchmarkErase1MP8, BenchmarkErase12MP8,
// which copy the photo; the border extrapolation takes about 0.03 and 0.06 s of
// that, the straight-line step 0.01 and 0.06 s, see the NoLines benchmarks);
// through porchlight process, decoding and encoding included, about 0.2 and 1.2 s.
// Memory follows the hole, not the photo: the peak heap is 96 to 138 bytes a pixel
// of WorkArea (measured on 12 MP: 14 to 138 bytes a photo pixel for holes of 2 to
// 88%), and admission charges 150. The coarse levels and the search's features are
// let go before the blend's buffers are made.
package inpaint
