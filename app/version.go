package app

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/porchlight/porchlight/engine/catalog"
)

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version and the recipe versions",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "porchlight %s (%s, %s/%s)\n", Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			for _, r := range recipeVersions() {
				fmt.Fprintf(out, "  %-16s %s\n", r[0], r[1])
			}
			return nil
		},
	}
}

// recipeVersions lists each feature with the recipe it delivers, from the catalog.
func recipeVersions() [][2]string {
	var out [][2]string
	for _, f := range catalog.Features(nil) {
		out = append(out, [2]string{f.Key, f.Recipe + "@" + f.Version})
	}
	return out
}
