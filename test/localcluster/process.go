package localcluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Process is a component run as a child process, logging to <dir>/logs/<name>.log. Its pid is
// kept in <dir>/pids/<name>.pid, so that a later `Down` can stop it.
type Process struct {
	Name string
	log  string
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// StartProcess starts bin with args and env (added to a copy of this process's environment,
// without CI, which makes OLM refuse objects it did not label). The process gets a session of
// its own, so it outlives the caller when detached.
func StartProcess(dir, name, bin string, args, env []string) (*Process, error) {
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o755); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(dir, "pids"), 0o755); err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, "logs", name+".log")
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Env = append(environWithout("CI"), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &Process{Name: name, log: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		log.Close()
		close(p.done)
	}()
	if err := os.WriteFile(pidFile(dir, name), []byte(strconv.Itoa(cmd.Process.Pid)), 0o644); err != nil {
		return nil, err
	}
	return p, nil
}

func pidFile(dir, name string) string { return filepath.Join(dir, "pids", name+".pid") }

func environWithout(key string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, key+"=") {
			env = append(env, kv)
		}
	}
	return env
}

// Pid is the process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Exited reports whether the process has ended.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// ExitError says how the process ended, with the last lines of its log, or nil while it runs.
func (p *Process) ExitError() error {
	if !p.Exited() {
		return nil
	}
	raw, _ := os.ReadFile(p.log)
	lines := strings.Split(strings.TrimRight(string(raw), "\n"), "\n")
	if len(lines) > logTail {
		lines = lines[len(lines)-logTail:]
	}
	return fmt.Errorf("%s exited (%w); the end of %s:\n%s", p.Name, p.err, p.log, strings.Join(lines, "\n"))
}

// logTail is how many of an exited process's last log lines ExitError quotes.
const logTail = 5

// Stop asks the process to end (SIGTERM) and kills it if it has not ended within grace.
func (p *Process) Stop(grace time.Duration) error {
	if p.Exited() {
		return nil
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return nil
	case <-time.After(grace):
		return p.Kill()
	}
}

// Kill ends the process at once (SIGKILL), as a crash would.
func (p *Process) Kill() error {
	if p.Exited() {
		return nil
	}
	if err := p.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	<-p.done
	return nil
}

// WaitExit waits for the process to end and returns how it ended.
func (p *Process) WaitExit(ctx context.Context) error {
	select {
	case <-p.done:
		return p.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// recordedPid is the pid a cluster directory recorded for a process.
func recordedPid(dir, name string) (int, bool) {
	raw, err := os.ReadFile(pidFile(dir, name))
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	return pid, err == nil
}

// killRecorded ends every process whose pid a cluster directory recorded.
func killRecorded(dir string) {
	files, _ := filepath.Glob(filepath.Join(dir, "pids", "*.pid"))
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(string(raw))); err == nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		_ = os.Remove(f)
	}
}
