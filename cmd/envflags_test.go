package cmd

import (
	"reflect"
	"testing"

	"github.com/spf13/cobra"

	"github.com/massgen-go/massgen/cmd/cmdutil"
)

func TestApplyEnvDefaults(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		env      map[string]string
		wantCfg  string
		wantDbg  bool
		wantCtx  []string
		wantCode int // 0: no error
	}{
		{name: "no env", wantCfg: ""},
		{name: "env fills unset flags", env: map[string]string{"MASSGEN_CONFIG": "a.yaml", "MASSGEN_DEBUG": "true", "MASSGEN_CONTEXT": "src:read"},
			wantCfg: "a.yaml", wantDbg: true, wantCtx: nil},
		{name: "flag wins over env", args: []string{"--config", "b.yaml"}, env: map[string]string{"MASSGEN_CONFIG": "a.yaml"}, wantCfg: "b.yaml"},
		{name: "bad value names the variable", env: map[string]string{"MASSGEN_DEBUG": "maybe"}, wantCode: cmdutil.ExitUsage},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var cfg string
			var dbg bool
			var ctxs []string
			c := &cobra.Command{Use: "x", RunE: func(*cobra.Command, []string) error { return nil }}
			c.Flags().StringVar(&cfg, "config", "", "")
			c.Flags().BoolVar(&dbg, "debug", false, "")
			c.Flags().StringArrayVar(&ctxs, "context", nil, "")
			if err := c.ParseFlags(tc.args); err != nil {
				t.Fatal(err)
			}
			err := applyEnvDefaults(c, func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok })
			if got := cmdutil.CodeOf(err); err != nil && got != tc.wantCode || err == nil && tc.wantCode != 0 {
				t.Fatalf("err = %v (code %d), want code %d", err, got, tc.wantCode)
			}
			if tc.wantCode != 0 {
				return
			}
			if cfg != tc.wantCfg || dbg != tc.wantDbg || !reflect.DeepEqual(ctxs, tc.wantCtx) {
				t.Fatalf("got config=%q debug=%v context=%v", cfg, dbg, ctxs)
			}
		})
	}
}

// --version and --help are not settings: MASSGEN_VERSION or MASSGEN_HELP in the environment (a
// CI variable, say) neither breaks a run nor turns it into printing the version.
func TestEnvDoesNotSetVersionOrHelp(t *testing.T) {
	e := newTestEnv(t, "")
	e.Write(t, ".massgen/config.yaml", scriptedConfig)
	e.Vars["MASSGEN_VERSION"] = "1.2.3"
	e.Vars["MASSGEN_HELP"] = "yes"
	if code := e.exec("--display", "silent", "task"); code != 0 || e.Out.String() != "the answer\n" {
		t.Errorf("exit %d, stdout %q, stderr:\n%s", code, e.Out, e.ErrOut)
	}
}
