package core

// Options are the order options of POST /v1/orders (and of a batch's defaults and
// scenes) as the client sent them. A nil pointer means "not given", which the spec
// distinguishes from an explicit false or zero: presets and batch defaults fill
// only what is nil.
type Options struct {
	GenEdit             *string  `json:"gen_edit,omitempty"`
	Perspective         *bool    `json:"perspective,omitempty"`
	PerspectiveStrength *float64 `json:"perspective_strength,omitempty"`
	Tonecraft           *bool    `json:"tonecraft,omitempty"`
	TonecraftProfile    *string  `json:"tonecraft_profile,omitempty"`
	TonecraftLevels     *bool    `json:"tonecraft_levels,omitempty"`
	TonecraftSharpen    *bool    `json:"tonecraft_sharpen,omitempty"`
	Align               *bool    `json:"align,omitempty"`
	Format              *string  `json:"format,omitempty"`
	Quality             *int     `json:"quality,omitempty"`
	Sky                 *bool    `json:"sky,omitempty"`
	SkyStyle            *string  `json:"sky_style,omitempty"`
	Privacy             *bool    `json:"privacy,omitempty"`
	Categories          []string `json:"categories,omitempty"`
	Threshold           *float64 `json:"threshold,omitempty"`
	GenQuality          *string  `json:"gen_quality,omitempty"`
	StagingPreset       *string  `json:"staging_preset,omitempty"`
	StagingStyle        *string  `json:"staging_style,omitempty"`
	StyleClause         *string  `json:"style_clause,omitempty"`
	RoomType            *string  `json:"room_type,omitempty"`
	FloorFinish         *string  `json:"floor_finish,omitempty"`
	WallColor           *string  `json:"wall_color,omitempty"`
	Mask                *string  `json:"mask,omitempty"`
	ColorCorrection     *bool    `json:"color_correction,omitempty"`
	LensCorrection      *bool    `json:"lens_correction,omitempty"`
	Flambient           *bool    `json:"flambient,omitempty"`
	ShootConsistency    *bool    `json:"shoot_consistency,omitempty"`
	Exposure            *float64 `json:"exposure,omitempty"`
	Temperature         *float64 `json:"temperature,omitempty"`
	Tint                *float64 `json:"tint,omitempty"`
	Contrast            *float64 `json:"contrast,omitempty"`
	Highlights          *float64 `json:"highlights,omitempty"`
	Shadows             *float64 `json:"shadows,omitempty"`
	Whites              *float64 `json:"whites,omitempty"`
	Blacks              *float64 `json:"blacks,omitempty"`
	Vibrance            *float64 `json:"vibrance,omitempty"`
	Saturation          *float64 `json:"saturation,omitempty"`
}

// Resolved are order options after defaults and presets were applied: every value is
// concrete. The engine and the pipeline work from these only.
type Resolved struct {
	GenEdit             string   `json:"gen_edit,omitempty"`
	Perspective         bool     `json:"perspective"`
	PerspectiveStrength float64  `json:"perspective_strength"`
	Tonecraft           bool     `json:"tonecraft"`
	TonecraftProfile    string   `json:"tonecraft_profile"`
	TonecraftLevels     bool     `json:"tonecraft_levels"`
	TonecraftSharpen    bool     `json:"tonecraft_sharpen"`
	Align               bool     `json:"align"`
	Format              string   `json:"format"`
	Quality             int      `json:"quality"`
	Sky                 bool     `json:"sky"`
	SkyStyle            string   `json:"sky_style"`
	Privacy             bool     `json:"privacy"`
	Categories          []string `json:"categories"`
	Threshold           float64  `json:"threshold"`
	GenQuality          string   `json:"gen_quality"`
	StagingPreset       string   `json:"staging_preset,omitempty"`
	StagingStyle        string   `json:"staging_style"`
	StyleClause         string   `json:"style_clause,omitempty"`
	RoomType            string   `json:"room_type"`
	FloorFinish         string   `json:"floor_finish"`
	WallColor           string   `json:"wall_color"`
	Mask                string   `json:"mask,omitempty"`
	ColorCorrection     bool     `json:"color_correction"`
	LensCorrection      bool     `json:"lens_correction"`
	Flambient           bool     `json:"flambient"`
	ShootConsistency    bool     `json:"shoot_consistency"`
	Exposure            float64  `json:"exposure"`
	Temperature         float64  `json:"temperature"`
	Tint                float64  `json:"tint"`
	Contrast            float64  `json:"contrast"`
	Highlights          float64  `json:"highlights"`
	Shadows             float64  `json:"shadows"`
	Whites              float64  `json:"whites"`
	Blacks              float64  `json:"blacks"`
	Vibrance            float64  `json:"vibrance"`
	Saturation          float64  `json:"saturation"`
}
