package app

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/keys"
	"github.com/porchlight/porchlight/engine/store"
)

// newKeysCommand manages API keys directly in the data dir. bbolt allows one process
// at a time, so these commands work while no server runs on the same data dir (the
// window and the API offer the same operations while they run).
func newKeysCommand(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "keys",
		Short: "Manage API keys (create, list, revoke, rotate)",
	}
	withKeys := func(c *cobra.Command, fn func(*keys.Service) error) error {
		cfg, err := load(c, g)
		if err != nil {
			return err
		}
		db, err := store.Open(cfg.DataDir)
		if err != nil {
			return err
		}
		defer db.Close()
		ks := keys.New(db)
		defer ks.Flush()
		return fn(ks)
	}

	var name, scope string
	create := &cobra.Command{
		Use:   "create",
		Short: "Create a key and print its secret (shown once)",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			sc := core.Scope(scope)
			if sc != core.ScopeStandard && sc != core.ScopeAdmin {
				return fmt.Errorf("--scope must be standard or admin, not %q", scope)
			}
			if name == "" {
				return fmt.Errorf("--name is required")
			}
			return withKeys(c, func(ks *keys.Service) error {
				k, secret, err := ks.Create(name, sc)
				if err != nil {
					return err
				}
				fmt.Fprintf(c.OutOrStdout(), "%s\n", secret)
				fmt.Fprintf(c.ErrOrStderr(), "created %s key %q (%s); the secret above is shown only once\n", k.Scope, k.Name, k.UUID)
				return nil
			})
		},
	}
	create.Flags().StringVar(&name, "name", "", "a label for the key")
	create.Flags().StringVar(&scope, "scope", "admin", "standard or admin")

	list := &cobra.Command{
		Use:   "list",
		Short: "List keys (never their secrets)",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			return withKeys(c, func(ks *keys.Service) error {
				all, err := ks.List()
				if err != nil {
					return err
				}
				tw := tabwriter.NewWriter(c.OutOrStdout(), 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "UUID\tNAME\tSCOPE\tPREFIX\tCREATED\tLAST USED")
				for _, k := range all {
					last := "never"
					if k.LastUsedAt != nil {
						last = k.LastUsedAt.Local().Format(time.DateTime)
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", k.UUID, k.Name, k.Scope, k.Prefix, k.CreatedAt.Local().Format(time.DateTime), last)
				}
				return tw.Flush()
			})
		},
	}

	revoke := &cobra.Command{
		Use:   "revoke UUID",
		Short: "Revoke a key; it stops working at once",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return withKeys(c, func(ks *keys.Service) error {
				if err := ks.Revoke(args[0]); err != nil {
					return err
				}
				fmt.Fprintf(c.ErrOrStderr(), "revoked %s\n", args[0])
				return nil
			})
		},
	}

	rotate := &cobra.Command{
		Use:   "rotate UUID",
		Short: "Give a key a new secret (printed once); the old one stops working at once",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return withKeys(c, func(ks *keys.Service) error {
				k, secret, err := ks.Rotate(args[0])
				if err != nil {
					return err
				}
				fmt.Fprintf(c.OutOrStdout(), "%s\n", secret)
				fmt.Fprintf(c.ErrOrStderr(), "rotated %q (%s)\n", k.Name, k.UUID)
				return nil
			})
		},
	}
	cmd.AddCommand(create, list, revoke, rotate)
	return cmd
}
