package pipeline

import (
	"strings"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/backends"
	"github.com/porchlight/porchlight/engine/catalog"
)

// genRecipe is one generative feature: the step it is, how its prompt and sampler
// settings come from the order's options, and whether its result is composited
// over the photo (the erasing features) or replaces it (staging).
type genRecipe struct {
	feature string // backends.Feature*
	step    string
	recipe  string // catalog.Recipe*
	// erase: the feature removes things; pixels it did not change stay the input's.
	erase bool
	// userMask: the order's mask says what to change (magic eraser).
	userMask bool
	// tiered: gen_quality chooses the tier; otherwise the balanced tier runs.
	tiered bool
	cost   float64 // expected seconds per megapixel before measurements
	params func(r core.Resolved, detected string) genParams
}

// genParams are what a recipe asks of the model.
type genParams struct {
	Prompt, Negative string
	Strength         float64
	tier
}

// tier is a gen_quality level: sampler steps, the longest edge the model works at,
// and the guidance scale.
type tier struct {
	Steps    int
	MaxEdge  int
	Guidance float64
}

var tiers = map[string]tier{
	"fast":     {Steps: 20, MaxEdge: 1024, Guidance: 6},
	"balanced": {Steps: 30, MaxEdge: 1536, Guidance: 7},
	"best":     {Steps: 45, MaxEdge: 2048, Guidance: 7.5},
}

func tierOf(r core.Resolved, tiered bool) tier {
	if t, ok := tiers[r.GenQuality]; ok && tiered {
		return t
	}
	return tiers["balanced"]
}

// photoNegative keeps every feature photographic and the architecture intact.
const photoNegative = "cartoon, illustration, painting, 3d render, CGI look, distorted perspective, warped or curved walls, " +
	"bent lines, extra windows, extra doors, duplicated furniture, floating objects, people, text, watermark, logo, " +
	"blurry, low resolution, noise, oversaturated"

const keepArchitecture = "Keep the architecture exactly as photographed: walls, ceiling, windows, doors, built-in fixtures, " +
	"camera position, perspective and the direction of the light."

// styleText is each staging_style's furniture, replaced by a style_clause.
var styleText = map[string]string{
	"contemporary": "contemporary furniture: a clean-lined sofa in soft neutral fabric, a low wooden coffee table, " +
		"a textured area rug, warm floor lamps, a few green plants and framed art",
	"modern": "modern furniture: sleek low-profile seating, glass and matte black metal accents, a geometric rug, " +
		"a statement pendant light and minimal decor",
	"scandinavian": "Scandinavian furniture: light oak and birch pieces, white and pale grey textiles, wool throws, " +
		"simple ceramic decor and plenty of open floor",
	"luxury": "luxury furniture: velvet upholstery, marble and brass surfaces, designer lighting, a silk rug " +
		"and curated art pieces",
	"ikea": "affordable flat-pack furniture: a simple practical sofa, birch veneer tables, white shelving with baskets, " +
		"a cotton rug and paper lamp shades",
	"industrial": "industrial loft furniture: a leather sofa, reclaimed wood and black steel tables, metal shelving, " +
		"Edison bulb pendants and a vintage rug",
}

var roomNames = map[string]string{
	"bathroom": "bathroom", "bedroom": "bedroom", "child_room": "child's bedroom", "dining_room": "dining room",
	"kitchen": "kitchen", "living_room": "living room", "office": "home office", "terrace": "terrace",
}

var floorText = map[string]string{
	"carpet_dark_blue":     "dark blue wall-to-wall carpet",
	"carpet_grey":          "grey wall-to-wall carpet",
	"concrete_light_grey":  "polished light grey concrete",
	"hardwood_aria":        "light natural oak hardwood planks",
	"hardwood_light_brown": "light brown hardwood planks",
	"tiles_grey":           "large grey floor tiles",
	"tiles_white":          "large white floor tiles",
}

var wallText = map[string]string{
	"white": "white", "warm_white": "warm white", "cream": "cream", "greige": "greige", "light_grey": "light grey",
	"sand": "sand", "taupe": "taupe", "sage_green": "sage green", "olive": "olive", "powder_blue": "powder blue",
	"terracotta": "terracotta", "charcoal": "charcoal grey",
}

// indoorParams builds indoor staging's prompt from the resolved staging options
// (the preset's values already merged with explicit ones) and the room type a
// classifier detected ("" without one): the room (auto takes the detected type, or
// leaves it to the model; a named type asks for that use, converting the room within
// its shell when it differs from what the photo shows), the furniture (the style's
// text or the clause that replaces it, none for keep), then the finishes.
func indoorParams(r core.Resolved, detected string) genParams {
	var p strings.Builder
	room := r.RoomType
	if room == "auto" || room == "" {
		room = detected
	}
	name, named := roomNames[room]
	convert := named && room != detected
	keep := r.StagingStyle == catalog.StyleKeep
	strength := 0.72
	if keep {
		strength = 0.45
		p.WriteString("Refresh the finishes of the room without restaging: do not add, remove or move any furniture or decor. ")
	} else {
		p.WriteString("Professional virtual staging of the room")
		switch {
		case convert && detected != "":
			p.WriteString(" as a " + name + ", converting it from a " + roomNames[detected] + " within the same walls")
		case convert:
			p.WriteString(" as a " + name + " (if the photo shows another kind of room, convert its use within the same walls)")
		case named:
			p.WriteString(" as a " + name)
		}
		p.WriteString(", furnished with ")
		style := styleText[r.StagingStyle]
		if c := strings.TrimSpace(r.StyleClause); c != "" {
			style = c
		}
		p.WriteString(strings.TrimSuffix(style, "."))
		p.WriteString(". Furniture to scale, grounded on the floor with natural contact shadows. ")
	}
	if f, ok := floorText[r.FloorFinish]; ok {
		p.WriteString("Replace the floor with " + f + ". ")
	} else {
		p.WriteString("Keep the existing floor. ")
	}
	if w, ok := wallText[r.WallColor]; ok {
		p.WriteString("Paint the walls " + w + ". ")
	} else {
		p.WriteString("Keep the wall colour. ")
	}
	p.WriteString(keepArchitecture)
	p.WriteString(" Photorealistic real-estate interior photograph, bright natural light.")
	return genParams{Prompt: p.String(), Negative: photoNegative + ", cluttered, messy", Strength: strength, tier: tierOf(r, true)}
}

func outdoorParams(r core.Resolved, _ string) genParams {
	return genParams{
		Prompt: "Stage the outdoor space of this property (garden, patio, deck, balcony or yard) with tasteful outdoor " +
			"furniture: a lounge set with weatherproof cushions, a dining table with chairs, planters with green plants " +
			"and soft outdoor lighting. Tidy the lawn and paths. Keep the building, its facade, windows, roof, fences, " +
			"the sky and the surroundings exactly as photographed. Photorealistic real-estate exterior photograph.",
		Negative: photoNegative + ", cluttered, broken furniture, snow, night",
		Strength: 0.55, tier: tierOf(r, true),
	}
}

func messParams(r core.Resolved, _ string) genParams {
	return genParams{
		Prompt: "The same room, tidied for a listing photo: remove clutter and loose items such as clothes, laundry, " +
			"dishes, bottles, papers, cables, toys, bags and personal belongings from the floor, tables and counters. " +
			"Keep all furniture, fixtures, rugs, curtains, lamps and decor exactly where and as they are. " +
			keepArchitecture + " Photorealistic.",
		Negative: photoNegative + ", clutter, mess, new furniture, moved furniture",
		Strength: 0.5, tier: tierOf(r, true),
	}
}

func declutterParams(r core.Resolved, _ string) genParams {
	return genParams{
		Prompt: "The same room, completely empty: remove all furniture, rugs, decorations, pictures, plants, loose " +
			"objects and people, revealing the bare floor and walls behind them and continuing their texture. " +
			keepArchitecture + " Photorealistic empty real-estate interior photograph.",
		Negative: photoNegative + ", furniture, rug, decoration, clutter, objects, shadows of removed objects",
		Strength: 0.85, tier: tierOf(r, false),
	}
}

func eraserParams(r core.Resolved, _ string) genParams {
	return genParams{
		Prompt: "Remove the object in the marked area completely and fill it with the surrounding background, " +
			"continuing its texture, lines and lighting seamlessly. Photorealistic.",
		Negative: photoNegative + ", object, remnants, outline, smudge",
		Strength: 1, tier: tierOf(r, false),
	}
}

// genRecipes are the generative features, by backend feature key.
var genRecipes = map[string]genRecipe{
	backends.FeatureIndoorStaging: {feature: backends.FeatureIndoorStaging, step: StepIndoorStaging,
		recipe: catalog.RecipeIndoorStaging, tiered: true, cost: 6, params: indoorParams},
	backends.FeatureOutdoorStaging: {feature: backends.FeatureOutdoorStaging, step: StepOutdoorStaging,
		recipe: catalog.RecipeOutdoorStaging, tiered: true, cost: 6, params: outdoorParams},
	backends.FeatureMessCleaner: {feature: backends.FeatureMessCleaner, step: StepMessCleaner,
		recipe: catalog.RecipeMessCleaner, erase: true, tiered: true, cost: 5, params: messParams},
	backends.FeatureDeclutter: {feature: backends.FeatureDeclutter, step: StepDeclutter,
		recipe: catalog.RecipeDeclutterLocal, erase: true, cost: 6, params: declutterParams},
	backends.FeatureMagicEraser: {feature: backends.FeatureMagicEraser, step: StepMagicEraser,
		recipe: catalog.RecipeMagicEraser, erase: true, userMask: true, cost: 3, params: eraserParams},
}
