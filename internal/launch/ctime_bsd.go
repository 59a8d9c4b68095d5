//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package launch

import "syscall"

func ctime(st *syscall.Stat_t) int64 { return st.Ctimespec.Nano() }
