// Command massgen runs several LLM agents on one task under a filesystem permission layer.
package main

import (
	"context"
	"log"
	"os"
	"os/signal"
	"syscall"

	"github.com/massgen-go/massgen/cmd"
	"github.com/massgen-go/massgen/cmd/cmdutil"
	"github.com/massgen-go/massgen/filesystem/sandbox"
)

func main() {
	sandbox.MaybeRunHelper()                    // re-executed as the command sandbox helper: never returns
	log.SetOutput(cmdutil.SDKLog{W: os.Stderr}) // the providers' SDKs print through the log package
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	ctx, cancel := context.WithCancel(ctx)
	// Ctrl-C: cancels the interactive turn in progress, otherwise the whole run.
	ctx, stopInterrupts := cmd.HandleInterrupts(ctx, cancel)
	code := cmd.Execute(ctx, cmdutil.NewFactory(), os.Args[1:])
	stopInterrupts()
	cancel()
	stop()
	os.Exit(code)
}
