package main

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// components are the processes whose CPU time the benchmark reports, by command name.
var components = []string{"kube-apiserver", "etcd", "kube-controller", "kube-scheduler", "kwok-controller", "manager"}

// clockTicks is the unit of the CPU times in /proc/<pid>/stat (USER_HZ).
const clockTicks = 100

// cpuSeconds sums the CPU time used so far by the processes of each named command.
func cpuSeconds(commands []string) (map[string]float64, error) {
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		return nil, err
	}
	used := map[string]float64{}
	for _, path := range stats {
		raw, err := os.ReadFile(path)
		if err != nil {
			continue // the process ended
		}
		// pid (comm) state ppid ... utime stime: utime and stime are the 14th and 15th fields,
		// the 12th and 13th after the command name, which may hold spaces.
		s := string(raw)
		open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || closing < open {
			continue
		}
		comm, rest := s[open+1:closing], strings.Fields(s[closing+1:])
		if len(rest) < 13 || !slices.Contains(commands, comm) {
			continue
		}
		utime, _ := strconv.ParseFloat(rest[11], 64)
		stime, _ := strconv.ParseFloat(rest[12], 64)
		used[comm] += (utime + stime) / clockTicks
	}
	return used, nil
}

// cpuSince returns the CPU seconds each named command used since before.
func cpuSince(commands []string, before map[string]float64) (map[string]float64, error) {
	now, err := cpuSeconds(commands)
	if err != nil {
		return nil, err
	}
	used := map[string]float64{}
	for comm, s := range now {
		used[comm] = s - before[comm]
	}
	return used, nil
}

// cpuPerApp divides a phase's CPU seconds among n Apps, in milliseconds: the manager's, and
// the rest of the cluster's.
func cpuPerApp(cpu map[string]float64, n int) (manager, controlPlane float64) {
	for component, seconds := range cpu {
		if component == "manager" {
			manager += seconds
		} else {
			controlPlane += seconds
		}
	}
	return manager * 1000 / float64(n), controlPlane * 1000 / float64(n)
}
