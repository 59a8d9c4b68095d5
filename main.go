// Command massgen runs several LLM agents on one task under a filesystem permission layer.
package main

import (
	"context"
	"log"
	"os"

	"github.com/massgen-go/massgen/cmd"
	"github.com/massgen-go/massgen/cmd/cmdutil"
	"github.com/massgen-go/massgen/internal/sandbox"
)

func main() {
	sandbox.MaybeRunHelper()                    // re-executed as the command sandbox helper: never returns
	log.SetOutput(cmdutil.SDKLog{W: os.Stderr}) // the providers' SDKs print through the log package
	// SIGTERM and SIGHUP cancel the run; Ctrl-C cancels the interactive turn in progress,
	// otherwise the whole run; SIGPIPE makes writes fail instead of killing massgen.
	ctx, stop := cmd.HandleSignals(context.Background())
	code := cmd.Execute(ctx, cmdutil.NewFactory(), os.Args[1:])
	stop()
	os.Exit(code)
}
