package catalog

// Recipe names.
const (
	RecipeDevelop        = "develop"
	RecipeSky            = "sky"
	RecipePrivacy        = "privacy"
	RecipeIndoorStaging  = "indoor_staging"
	RecipeOutdoorStaging = "outdoor_staging"
	RecipeMessCleaner    = "mess_cleaner"
	RecipeMagicEraser    = "magic_eraser"
	RecipeDeclutterLocal = "declutter_local"
)

// recipes is the semver each recipe currently delivers (the spec's Versioning table).
var recipes = map[string]string{
	RecipeDevelop:        "1.3.0",
	RecipeSky:            "4.1.0",
	RecipePrivacy:        "1.1.0",
	RecipeIndoorStaging:  "1.18.0",
	RecipeOutdoorStaging: "1.9.0",
	RecipeMessCleaner:    "1.8.0",
	RecipeMagicEraser:    "4.2.0",
	RecipeDeclutterLocal: "2.2.0",
}

// Feature categories.
const (
	CategoryEnhancement = "enhancement"
	CategoryStaging     = "staging"
	CategoryInpainting  = "inpainting"
)

// Feature is one entry of the public feature catalog (GET /v1/features).
// NeedsBackend marks the features that run on a model backend; it is not part of the
// JSON, which shows the outcome as available.
type Feature struct {
	Key          string  `json:"key"`
	Category     string  `json:"category"`
	Recipe       string  `json:"recipe"`
	Version      string  `json:"version"`
	Parameters   []Param `json:"parameters"`
	Available    bool    `json:"available"`
	NeedsBackend bool    `json:"-"`
}

type featureRow struct {
	key, category, recipe string
	genEdit               string // the gen_edit value that selects it, if any
	needsBackend          bool
}

// features is the catalog, in the order of the spec's feature table. Magic eraser
// has a built-in local inpainter, so it needs no backend.
var features = []featureRow{
	{key: FeatureEnhancer, category: CategoryEnhancement, recipe: RecipeDevelop},
	{key: FeatureAutoHDR, category: CategoryEnhancement, recipe: RecipeDevelop},
	{key: FeatureSkyReplacement, category: CategoryEnhancement, recipe: RecipeSky},
	{key: FeaturePrivacyBlur, category: CategoryEnhancement, recipe: RecipePrivacy},
	{key: FeatureIndoorStaging, category: CategoryStaging, recipe: RecipeIndoorStaging, genEdit: GenIndoorStaging, needsBackend: true},
	{key: FeatureOutdoorStaging, category: CategoryStaging, recipe: RecipeOutdoorStaging, genEdit: GenOutdoorStaging, needsBackend: true},
	{key: FeatureMessCleaner, category: CategoryEnhancement, recipe: RecipeMessCleaner, genEdit: GenMessCleaner, needsBackend: true},
	{key: FeatureDeclutter, category: CategoryEnhancement, recipe: RecipeDeclutterLocal, genEdit: GenDeclutterLocal, needsBackend: true},
	{key: FeatureMagicEraser, category: CategoryInpainting, recipe: RecipeMagicEraser, genEdit: GenMagicEraser},
}

// Features returns the feature catalog. available says whether a feature can run now
// (the configured backends decide); with available nil, the features that need a
// model backend are unavailable and the others available.
func Features(available func(featureKey string) bool) []Feature {
	out := make([]Feature, 0, len(features))
	for _, f := range features {
		params := []Param{}
		for i := range options {
			for _, k := range options[i].Features {
				if k == f.key {
					params = append(params, options[i].clone())
				}
			}
		}
		ok := !f.needsBackend
		if available != nil {
			ok = available(f.key)
		}
		out = append(out, Feature{
			Key:          f.key,
			Category:     f.category,
			Recipe:       f.recipe,
			Version:      recipes[f.recipe],
			Parameters:   params,
			Available:    ok,
			NeedsBackend: f.needsBackend,
		})
	}
	return out
}

// FeatureKeys returns the catalog keys in catalog order.
func FeatureKeys() []string {
	out := make([]string, len(features))
	for i, f := range features {
		out[i] = f.key
	}
	return out
}

// GenEditFeature returns the catalog key of the feature that a gen_edit value
// selects ("declutter_local" -> "declutter"), and false for an unknown value.
func GenEditFeature(genEdit string) (string, bool) {
	for _, f := range features {
		if f.genEdit != "" && f.genEdit == genEdit {
			return f.key, true
		}
	}
	return "", false
}

// genEditRecipe returns the recipe that a gen_edit value runs.
func genEditRecipe(genEdit string) string {
	for _, f := range features {
		if f.genEdit != "" && f.genEdit == genEdit {
			return f.recipe
		}
	}
	return ""
}

// Recipes returns every recipe name with its current version.
func Recipes() map[string]string {
	out := make(map[string]string, len(recipes))
	for k, v := range recipes {
		out[k] = v
	}
	return out
}

// RecipeVersion returns the current version of a recipe, false when unknown.
func RecipeVersion(recipe string) (string, bool) {
	v, ok := recipes[recipe]
	return v, ok
}
