// Package catalog is the one table of Porchlight's features, order options and
// presets. Everything the rest of the program says about an option is derived from
// that table, so the public feature catalog, the decoding of request bodies and CLI
// flags, the defaults, the validation and the preset resolution cannot disagree:
//
//   - options (table.go) lists every order option once: its JSON name, type, default,
//     enum, bounds, maximum length, the features it belongs to and a one-sentence
//     description (what --help and the OpenAPI document say it does). The name is also
//     the json tag of the matching field of core.Options and core.Resolved; the table
//     is bound to those fields when the package loads, so a missing or mistyped field
//     stops every test at once rather than surfacing as a wrong answer.
//   - features (features.go) lists the nine features with their recipe and category;
//     a feature's parameters are the options whose Features name it.
//   - recipes (features.go) holds each recipe's semver; the catalog, the order
//     summaries (RecipesFor) and `porchlight version` read it from there.
//   - presets (presets.go) hold the tonecraft looks and the indoor-staging looks as
//     typed Go values (Look, Staging); the JSON settings of a preset are derived from
//     those values, and Resolve uses the same values.
//
// DecodeOptions and DecodeStrings turn a request body or flag values into
// core.Options with type, enum, range and syntax checks; Merge lays a batch scene
// over the batch defaults; Resolve applies defaults and presets and the cross-field
// rules of the spec (staging rules 1 to 5, magic eraser's mask, batch limits) and
// yields the concrete core.Resolved that the engine runs; ResolveScene adds the
// input count's rules (ResolveSceneUpTo for a front door that takes more than the
// spec's MaxInputs). Every refusal is a
// core.Invalid error whose field names the offending option.
package catalog
