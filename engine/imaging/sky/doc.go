// Package sky finds the sky in exterior photos and replaces it with a synthetic one
// (recipe sky@4.1.0). It works on the photo alone: no model server.
//
// Segmentation runs on a copy with a long edge of 512 pixels:
//
//  1. Seeds grow from the top edge through smooth, bright pixels whose colour changes
//     gradually (after a colour closing that erases power lines and twigs). Seed parts
//     that are not mostly blue or bright white (a ceiling, a facade) are dropped; the
//     rest extend across cloud edges and haze through sky-coloured pixels.
//  2. Gaussian mixtures in CIELAB learn the sky and the rest of this photo from the
//     seeds and from textured or low pixels.
//  3. A minimum cut (Boykov-Kolmogorov max-flow on the 8-connected grid) minimises
//     colour, texture, position and seed terms plus contrast-sensitive smoothness; the
//     mixtures are refitted from the cut twice. Only sky connected to the top edge is
//     kept (connectivity bridges thin lines), so windows and walls enclosed by the
//     building never count; an enclosed pocket comes back only when it is sure sky
//     (pockets.go): big enough, of the nearby open sky's colour, rimmed by foliage.
//  4. A verdict rejects regions that are not sky: too small, touching too little of
//     the top edge, reaching the bottom of the frame, or neither blue nor a bright
//     overcast (ceilings, lamp-lit walls, garden views through windows).
//
// The hard labels become a soft matte at full resolution: thin dark lines are carved
// out and sky pockets in foliage keyed in at up to 1024 pixels, and a colour guided
// filter makes the matte follow roof lines, wires and branches. That coarse matte is
// refined through a trimap (refine.go): an unknown band around its edge, wide where the
// ground beside it is foliage (textured, gradients every way), where alpha comes from
// each pixel's position between the local sky and ground colours; a pale surface of
// some thickness that is no such mix and whose colour the open sky nearby lacks (a
// metal flashing on a cornice) is ground. A guided filter with a small window, whose
// linear coefficients are evaluated against every full-resolution pixel, carries the
// refined matte to full resolution.
//
// Replacement draws the chosen style (clear, low_cloud, neutral, high_cloud) at up to
// 1600 pixels: a vertical gradient from real sky colours and, except for clear, a
// seeded, domain-warped noise cloud field on a perspective cloud layer (high_cloud:
// clumps of short, fraying fibres over a mottled veil). The sky is composited through
// the matte in linear light: each mixed skyline pixel's foreground colour is estimated
// (least squares against the local old sky, held towards the local ground colour as
// alpha nears 1) and laid over the new sky, and the pixels just outside the matte are
// cleaned of sky spill the same way, so the old sky leaves no halo. Within the
// skyline's first pixels (fading out at 1/192 of the long edge) surfaces brighter than
// the ground beside them, and not of a hue against the sky's, are relit: the old sky's
// light they carry (a flashing or a sunlit coping mirroring the blue, leaf edges) is
// swapped for the new sky's, as an editor's lighting adjustment does; shade is left
// alone. The foreground's white balance moves a few percent towards the new sky's
// light. Output is deterministic per input and style.
package sky
