package backends

import (
	"slices"
	"testing"

	"github.com/massgen-go/massgen/configs"
)

// TestKnownTypesMatchConfigs: a type the config validator accepts must be one New can build,
// and a type New can build must not be refused by the validator.
func TestKnownTypesMatchConfigs(t *testing.T) {
	ours, theirs := KnownTypes(), configs.KnownBackendTypes()
	slices.Sort(theirs)
	if !slices.Equal(ours, theirs) {
		t.Fatalf("backends.KnownTypes() = %v\nconfigs.KnownBackendTypes() = %v", ours, theirs)
	}
}
