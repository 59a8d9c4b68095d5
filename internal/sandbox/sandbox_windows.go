//go:build windows

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
	"unsafe"

	"go.uber.org/zap"
	"golang.org/x/sys/windows"

	"github.com/massgen-go/massgen/internal/sysshell"
)

// MaybeRunHelper: there is no re-executed helper on Windows.
func MaybeRunHelper() {}

// LandlockABI: Landlock is Linux only.
func LandlockABI() int { return 0 }

// BubblewrapPath: bubblewrap is Linux only.
func BubblewrapPath() string { return "" }

// thisHost is this Windows machine, as Effective asks about it: `none` runs commands
// unsandboxed; every other mode, auto included, is refused with a message naming WSL2.
func thisHost() host { return host{goos: "windows"} }

// NamespacesError: the namespaces mode is Linux only.
func NamespacesError() error { return windowsNamespacesError() }

// Run runs o.Command through cmd.exe (%ComSpec% /S /C) when the mode is none, in a job object
// that ends with the command: whatever the command started (`start /b`, a server) is killed
// when it exits, times out or the run is cancelled, and when massgen itself goes (the job is
// kill-on-close). Every other mode is refused. A non-zero exit is not an error.
func Run(ctx context.Context, o Options) (Result, error) {
	mode, err := Effective(o.Mode)
	if err != nil {
		return Result{}, err
	}
	log := o.Log
	if log == nil {
		log = zap.NewNop()
	}
	o.withDefaults()
	dir := o.Dir
	if o.DirHandle != nil {
		// The directory the caller opened, wherever it is now.
		if dir, err = finalPath(o.DirHandle); err != nil {
			return Result{Sandbox: mode}, fmt.Errorf("sandbox: working directory: %w", err)
		}
	}
	if dir, err = windowsCmdDir(dir); err != nil {
		return Result{Sandbox: mode}, err
	}
	comspec := sysshell.WindowsComSpec(os.Getenv)
	line, err := sysshell.WindowsCmdLine(comspec, o.Command)
	if err != nil {
		return Result{Sandbox: mode}, fmt.Errorf("sandbox: %w", err)
	}
	tmp, err := os.MkdirTemp("", "massgen-cmd-")
	if err != nil {
		return Result{}, fmt.Errorf("sandbox: private temp dir: %w", err)
	}
	defer os.RemoveAll(tmp)
	job, err := newKillJob(o.Limits.WithDefaults())
	if err != nil {
		log.Warn("sandbox: creating the job object failed", zap.Error(err))
		return Result{Sandbox: mode}, fmt.Errorf("sandbox: job object: %w; the command was not run", err)
	}
	// Kill-on-close: closing the last handle ends whatever is still in the job.
	defer windows.CloseHandle(job)

	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	stdout := &capped{max: o.MaxOutput}
	stderr := &capped{max: o.MaxOutput}
	cmd := exec.CommandContext(ctx, comspec)
	cmd.Dir = dir
	cmd.Env = append(windowsEnv(os.LookupEnv, tmp), o.Env...)
	// Started suspended, so it runs no instruction before it is in the job; its own process
	// group, so a Ctrl+C meant for massgen does not reach it (cancelling the run ends it).
	cmd.SysProcAttr = &syscall.SysProcAttr{
		CmdLine:       line,
		CreationFlags: windows.CREATE_SUSPENDED | windows.CREATE_NEW_PROCESS_GROUP,
	}
	cmd.Cancel = func() error {
		_ = windows.TerminateJobObject(job, 1)
		return cmd.Process.Kill() // in case it never entered the job
	}
	// If something outside the job keeps the pipes open, stop waiting for it.
	cmd.WaitDelay = 2 * time.Second
	cmd.Stdout, cmd.Stderr = stdout, stderr

	start := time.Now()
	runErr := cmd.Start()
	if runErr == nil {
		if err := enterJob(job, cmd.Process.Pid); err != nil {
			// Outside the job it could outlive the call: it must not run at all.
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			log.Warn("sandbox: putting the command in its job object failed", zap.Error(err))
			return Result{Sandbox: mode}, fmt.Errorf("sandbox: job object: %w; the command was not run", err)
		}
		runErr = cmd.Wait()
		// What the command left running (`start /b server`) goes with it.
		_ = windows.TerminateJobObject(job, 1)
	}
	res := Result{
		Stdout:     stdout.buf.String(),
		Stderr:     stderr.buf.String(),
		Truncated:  stdout.truncated || stderr.truncated,
		Sandbox:    mode,
		DurationMS: time.Since(start).Milliseconds(),
	}
	return outcome(ctx, res, runErr, comspec)
}

// newKillJob creates a job object whose processes are all killed when its last handle closes,
// bounded by lim: the memory committed by the whole job, its number of processes, the user CPU
// time of each process (Windows has no file size limit; hits are not reported).
func newKillJob(lim Limits) (windows.Handle, error) {
	if err := lim.Validate(); err != nil {
		return 0, err
	}
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return 0, err
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{
		BasicLimitInformation: windows.JOBOBJECT_BASIC_LIMIT_INFORMATION{
			LimitFlags: windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE | windows.JOB_OBJECT_LIMIT_JOB_MEMORY |
				windows.JOB_OBJECT_LIMIT_ACTIVE_PROCESS | windows.JOB_OBJECT_LIMIT_PROCESS_TIME,
			ActiveProcessLimit:      uint32(lim.Processes),
			PerProcessUserTimeLimit: int64(lim.CPUSeconds) * 10_000_000, // 100 ns units
		},
		JobMemoryLimit: uintptr(lim.MemoryMB) << 20,
	}
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(job)
		return 0, err
	}
	return job, nil
}

// enterJob puts the suspended process pid in job, then resumes its threads. The process is
// ours and not yet waited for, so pid still names it.
func enterJob(job windows.Handle, pid int) error {
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(pid))
	if err != nil {
		return fmt.Errorf("opening the process: %w", err)
	}
	defer windows.CloseHandle(h)
	if err := windows.AssignProcessToJobObject(job, h); err != nil {
		return fmt.Errorf("assigning the process: %w", err)
	}
	return resumeThreads(uint32(pid))
}

// resumeThreads resumes the threads of process pid (a process created suspended has one).
func resumeThreads(pid uint32) error {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPTHREAD, 0)
	if err != nil {
		return fmt.Errorf("listing threads: %w", err)
	}
	defer windows.CloseHandle(snap)
	te := windows.ThreadEntry32{Size: uint32(unsafe.Sizeof(windows.ThreadEntry32{}))}
	resumed := 0
	for err = windows.Thread32First(snap, &te); err == nil; err = windows.Thread32Next(snap, &te) {
		if te.OwnerProcessID != pid {
			continue
		}
		th, err := windows.OpenThread(windows.THREAD_SUSPEND_RESUME, false, te.ThreadID)
		if err != nil {
			return fmt.Errorf("opening thread %d: %w", te.ThreadID, err)
		}
		_, err = windows.ResumeThread(th)
		windows.CloseHandle(th)
		if err != nil {
			return fmt.Errorf("resuming thread %d: %w", te.ThreadID, err)
		}
		resumed++
	}
	if !errors.Is(err, windows.ERROR_NO_MORE_FILES) {
		return fmt.Errorf("listing threads: %w", err)
	}
	if resumed == 0 {
		return errors.New("the process has no thread to resume")
	}
	return nil
}

// finalPath is the path Windows has for the open file f now (\\?\C:\... or \\?\UNC\...).
func finalPath(f *os.File) (string, error) {
	const volumeNameDOS = 0 // FILE_NAME_NORMALIZED | VOLUME_NAME_DOS
	buf := make([]uint16, 512)
	for {
		n, err := windows.GetFinalPathNameByHandle(windows.Handle(f.Fd()), &buf[0], uint32(len(buf)), volumeNameDOS)
		if err != nil {
			return "", err
		}
		if int(n) < len(buf) {
			return windows.UTF16ToString(buf[:n]), nil
		}
		buf = make([]uint16, n) // too small: n is the size needed
	}
}

// PlanNetwork: no sandbox runs here, so the network is never confined (see planCommon).
func PlanNetwork(sandbox Mode, netMode NetworkMode) NetworkPlan {
	p, _, _ := planCommon(sandbox, netMode)
	return p
}
