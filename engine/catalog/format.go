package catalog

// FormatExt is the file extension of a delivered photo in format (an enum value of
// the "format" option): ".png", ".webp", else ".jpg".
func FormatExt(format string) string {
	switch format {
	case "png":
		return ".png"
	case "webp":
		return ".webp"
	}
	return ".jpg"
}
