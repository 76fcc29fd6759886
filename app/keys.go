package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/keys"
	"github.com/porchlight/porchlight/engine/store"
)

// keysLockWait is how long the keys commands wait for the database: a running
// Porchlight holds it until it stops, so waiting longer helps nobody.
const keysLockWait = time.Second

// newKeysCommand manages API keys directly in the data dir. bbolt allows one process
// at a time, so these commands work while no server runs on the same data dir (the
// window and the API offer the same operations while they run); when one does, the
// error names it and says how to do the same through its API.
func newKeysCommand(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "keys",
		Short: "Manage API keys (create, list, revoke, rotate)",
	}
	// apiWay is the request that does the same through a running server's API.
	type apiWay func(base string) string
	withKeys := func(c *cobra.Command, api apiWay, fn func(*keys.Service) error) error {
		cfg, err := load(c, g)
		if err != nil {
			return err
		}
		db, err := store.OpenWait(cfg.DataDir, keysLockWait)
		if errors.Is(err, store.ErrLocked) {
			return heldError(cfg.DataDir, api)
		}
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
			api := func(base string) string {
				body, _ := json.Marshal(map[string]string{"name": name, "scope": scope})
				return fmt.Sprintf("curl -s -X POST %s/v1/api-keys -H \"X-API-Key: $ADMIN_KEY\" -H 'Content-Type: application/json' -d %s",
					base, shellQuote(string(body)))
			}
			return withKeys(c, api, func(ks *keys.Service) error {
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
			api := func(base string) string {
				return fmt.Sprintf("curl -s %s/v1/api-keys -H \"X-API-Key: $ADMIN_KEY\"", base)
			}
			return withKeys(c, api, func(ks *keys.Service) error {
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
			api := func(base string) string {
				return fmt.Sprintf("curl -s -X DELETE %s/v1/api-keys/%s -H \"X-API-Key: $ADMIN_KEY\"", base, shellQuote(args[0]))
			}
			return withKeys(c, api, func(ks *keys.Service) error {
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
			api := func(base string) string {
				// Through the API a key rotates itself: the request carries its own secret.
				return fmt.Sprintf("curl -s -X POST %s/v1/api-keys/rotate -H \"X-API-Key: $THAT_KEY\"", base)
			}
			return withKeys(c, api, func(ks *keys.Service) error {
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

// heldError explains that a running Porchlight holds the database: which one (its
// pid and its own address), and the two ways on: stop it, or use its API.
func heldError(dataDir string, api func(base string) string) error {
	path := filepath.Join(dataDir, store.FileName)
	h := findHolder(dataDir, path)
	var b strings.Builder
	fmt.Fprintf(&b, "%s is in use by %s, and `porchlight keys` needs the database to itself (one process at a time).\n", path, h)
	if h.PID != 0 {
		fmt.Fprintf(&b, "Either stop it first (Ctrl-C where it runs, or kill %d) and run this again,\n", h.PID)
	} else {
		b.WriteString("Either stop it first (Ctrl-C where it runs) and run this again,\n")
	}
	switch {
	case h.URL != "":
		fmt.Fprintf(&b, "or do the same through its API with an admin key:\n  %s", api(h.URL))
	case h.Own:
		b.WriteString("or use the window's Settings, API tab, which manages the keys while it runs")
	default:
		b.WriteString("or, if it serves the API, do the same there with an admin key (POST /v1/api-keys issues a key)")
	}
	return errors.New(b.String())
}
