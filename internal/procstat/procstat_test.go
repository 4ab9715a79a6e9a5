package procstat

import (
	"os"
	"testing"
)

func TestParseStatus(t *testing.T) {
	status := "Name:\treelay\nVmPeak:\t 2000000 kB\nVmHWM:\t   97656 kB\nVmRSS:\t   48828 kB\nThreads:\t9\n"
	m, err := parseStatus([]byte(status))
	if err != nil {
		t.Fatal(err)
	}
	// 97656 KiB = 99,999,744 bytes = 100.0 MB; 48828 KiB = 50.0 MB.
	if m.HWMMB != 100 || m.RSSMB != 50 {
		t.Errorf("got %+v, want HWM 100 MB, RSS 50 MB", m)
	}
	if _, err := parseStatus([]byte("Name:\tx\nVmRSS:\t1 kB\n")); err == nil {
		t.Error("a status without VmHWM was accepted")
	}
	if _, err := parseStatus([]byte("VmRSS:\t1 MB\nVmHWM:\t1 kB\n")); err == nil {
		t.Error("a status in an unknown unit was accepted")
	}
	if m, err := ReadMemory(os.Getpid()); err == nil && (m.RSSMB <= 0 || m.HWMMB < m.RSSMB) {
		t.Errorf("own memory %+v: want 0 < RSS <= HWM", m)
	}
}

func TestParseStat(t *testing.T) {
	// A command name with a space and parentheses; utime 150 and stime 25 ticks.
	stat := "4242 (re lay (x)) S 1 4242 4242 0 -1 4194560 1000 0 0 0 150 25 0 0 20 0 9 0 100 2000000 12000 18446744073709551615\n"
	if s, err := parseStat([]byte(stat)); err != nil || s != 1.75 {
		t.Errorf("got %v s, %v; want 1.75 s", s, err)
	}
	for _, bad := range []string{"4242 reelay S 1", "4242 (reelay) S 1 2 3", "4242 (reelay) S 1 4242 4242 0 -1 4194560 1000 0 0 0 x 25 0"} {
		if _, err := parseStat([]byte(bad)); err == nil {
			t.Errorf("%q was accepted", bad)
		}
	}
	if s, err := ReadCPU(os.Getpid()); err == nil && s < 0 {
		t.Errorf("own CPU %v s", s)
	}
}

func TestParseMachineStat(t *testing.T) {
	// user 100, nice 10, system 50, idle 1000, iowait 40, irq 5, softirq 5, steal 30, then
	// guest times, already in user and nice.
	stat := "cpu  100 10 50 1000 40 5 5 30 20 0\ncpu0 50 5 25 500 20 2 3 15 10 0\nintr 1\n"
	if s, err := parseMachineStat([]byte(stat)); err != nil || s != 2 {
		t.Errorf("got %v s, %v; want 2 s", s, err)
	}
	for _, bad := range []string{"", "intr 1 2 3 4 5 6\n", "cpu 1 2 3\n", "cpu 1 2 x 4 5 6\n"} {
		if _, err := parseMachineStat([]byte(bad)); err == nil {
			t.Errorf("%q was accepted", bad)
		}
	}
	if s, err := ReadMachineCPU(); err == nil && s <= 0 {
		t.Errorf("machine CPU %v s", s)
	}
}
