package catalog

import "testing"

func TestTableBindsToCore(t *testing.T) {
	if len(Params()) != len(options) || len(Features(nil)) != 9 {
		t.Fatal("table not loaded")
	}
}
