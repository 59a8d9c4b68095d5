// Package confine is the part of the command sandbox that runs in the confined process itself
// (Linux): the namespaces helper (massgen re-executed with HelperArg, its Spec on fd 3) that
// builds the command's view of the file system from handles and execs the command, the
// confinement of a thread (Landlock ruleset, no_new_privs, capabilities, seccomp filter) that
// the in-process modes of package sandbox use, and the types of the plan they share.
//
// It imports only the standard library, golang.org/x/sys/unix and go-landlock's syscall
// package, and dispatches the helper from its init: Go initialises a package as soon as its
// imports are, in import-path order, so the re-executed helper starts before the packages it
// does not need (zap, the provider SDKs, the terminal UI) are initialised. Keep it that way:
// TestImports fails on any other import. Package sandbox decides what a command may touch;
// this package only carries out a decided plan.
//
// On other systems the package is empty.
package confine
