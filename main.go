// Command massgen runs several LLM agents on one task under a filesystem permission layer.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/massgen-go/massgen/cmd"
	"github.com/massgen-go/massgen/cmd/cmdutil"
	"github.com/massgen-go/massgen/filesystem/sandbox"
)

func main() {
	sandbox.MaybeRunHelper() // re-executed as the command sandbox helper: never returns
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cmd.Execute(ctx, cmdutil.NewFactory(), os.Args[1:])
	stop()
	os.Exit(code)
}
