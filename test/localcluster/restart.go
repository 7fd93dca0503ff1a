package localcluster

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// RestartAPIServer kills kube-apiserver (SIGKILL) and starts it again with the same command
// line, environment and log, as a crash and a restart by its supervisor would. It returns
// once the API server serves again.
func (c *Cluster) RestartAPIServer(ctx context.Context) error {
	kwok := filepath.Join(c.Dir, "kwok", "clusters", c.Name)
	pidFile := filepath.Join(kwok, "pids", "kube-apiserver.pid")
	raw, err := os.ReadFile(pidFile)
	if err != nil {
		return err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil {
		return err
	}
	args, err := nulSeparated(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return err
	}
	env, err := nulSeparated(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		return err
	}
	cwd, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid))
	if err != nil {
		return err
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return err
	}
	for syscall.Kill(pid, 0) == nil {
		time.Sleep(50 * time.Millisecond)
	}

	log, err := os.OpenFile(filepath.Join(kwok, "logs", "kube-apiserver.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer log.Close()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env, cmd.Dir, cmd.Stdout, cmd.Stderr = env, cwd, log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting kube-apiserver again: %w", err)
	}
	go func() { _ = cmd.Wait() }()
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(cmd.Process.Pid)), 0o644); err != nil {
		return err
	}
	return c.Poll(ctx, 2*time.Minute, "kube-apiserver to serve again", func(ctx context.Context) (bool, error) {
		return c.Client.List(ctx, &corev1.NamespaceList{}) == nil, nil
	})
}

func nulSeparated(path string) ([]string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range bytes.Split(bytes.TrimRight(raw, "\x00"), []byte{0}) {
		out = append(out, string(f))
	}
	return out, nil
}
