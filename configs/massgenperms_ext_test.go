package configs_test

import (
	"slices"
	"testing"

	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/filesystem"
	"github.com/massgen-go/massgen/permissions/toolargs"
)

// The file tools a mapped read_file or write_file rule names are massgen's, by what each does to
// its paths (filesystem.Table, the tools' one declaration): every tool writing or deleting a path
// is named by write_file rules, every tool only reading paths by read_file rules.
func TestBackendPermissionToolLists(t *testing.T) {
	mapped := func(rule string) []string {
		return configs.MapBackendPermissions(&configs.BackendPermissions{Rules: configs.BackendRules{Deny: []string{rule}}}).Deny
	}
	reads, writes := mapped("read_file(P)"), mapped("write_file(P)")
	for name, tool := range filesystem.Table() {
		if len(tool.Args) == 0 || tool.Command {
			continue
		}
		list, kind := reads, "read_file"
		if slices.ContainsFunc(tool.Args, func(a toolargs.Arg) bool { return a.Access != toolargs.Read }) {
			list, kind = writes, "write_file"
		}
		if !slices.Contains(list, name+"(P)") {
			t.Errorf("%s is not named by a mapped %s rule: %q", name, kind, list)
		}
	}
}
