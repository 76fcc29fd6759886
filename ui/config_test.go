package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/viper"
)

// Saving settings rewrites a file that holds secrets (admin_key, backends'
// api_key): it comes out 0600 whatever it was, or stricter when it already was,
// and never lets a temporary copy linger.
func TestConfigSaveKeepsSecretsPrivate(t *testing.T) {
	for _, c := range []struct {
		name       string
		before     os.FileMode // 0: no file yet
		want       os.FileMode
		withSecret bool
	}{
		{"widely readable", 0o644, 0o600, true},
		{"group readable", 0o640, 0o600, true},
		{"private", 0o600, 0o600, true},
		{"read-only", 0o400, 0o400, true},
		{"new", 0, 0o600, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "config.yaml")
			v := viper.New()
			if c.before != 0 {
				body := "listen: 127.0.0.1:9000\nadmin_key: sk-admin-0123456789abcdef\n" +
					"backends:\n  cloud: {type: openai, url: \"http://127.0.0.1:1/v1\", api_key: sk-backend-secret}\n"
				if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(file, c.before); err != nil {
					t.Fatal(err)
				}
				v.SetConfigFile(file)
				if err := v.ReadInConfig(); err != nil {
					t.Fatal(err)
				}
			}
			cfg := NewConfig(v, file)
			cfg.Set(KeyWorkers, 2)
			if err := cfg.Save(); err != nil {
				t.Fatal(err)
			}
			st, err := os.Stat(file)
			if err != nil {
				t.Fatal(err)
			}
			if got := st.Mode().Perm(); got != c.want {
				t.Errorf("mode %o after saving, want %o", got, c.want)
			}
			back, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if c.withSecret && (!strings.Contains(string(back), "sk-admin-0123456789abcdef") || !strings.Contains(string(back), "sk-backend-secret")) {
				t.Errorf("secrets lost:\n%s", back)
			}
			if !strings.Contains(string(back), "workers: 2") {
				t.Errorf("the setting was not saved:\n%s", back)
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != 1 {
				t.Errorf("files beside the config: %v", entries)
			}
		})
	}
}
