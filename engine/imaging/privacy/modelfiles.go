package privacy

// ModelFiles lists every cascade the detectors load, as paths relative to a models
// folder ("haarcascades/haarcascade_eye.xml"), each once. Installers copy these files
// and installation checks look for them with FindModel.
func ModelFiles() []string {
	var out []string
	seen := map[string]bool{}
	add := func(rel string) {
		if !seen[rel] {
			seen[rel] = true
			out = append(out, rel)
		}
	}
	for _, f := range faceModelFiles {
		add(f.rel)
	}
	add(eyeModel)
	for _, rel := range plateModelFiles {
		add(rel)
	}
	return out
}
