package bench

import (
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// File names in the output directory.
const (
	MarkdownFile = "results.md"
	CSVFile      = "results.csv"
)

// CSVHeader names the CSV columns; counts are absolute, so ratios can be
// recomputed.
var CSVHeader = []string{
	"engine", "ply", "processes", "load", "wall_s", "cpu_s", "server_cpu_s", "positions", "edges", "edges_per_s",
	"tx_enumeration", "tx_dedup", "tx_results", "tx_other", "tx_total", "tx_per_edge",
	"stored_bytes", "bytes_per_position", "peak_disk_bytes", "peak_rss_bytes", "merged_keys", "merged_per_position", "root", "check",
}

// WriteFiles writes the rows as results.md and results.csv in dir;
// results.md starts with intro (see Intro) when it is not empty.
func WriteFiles(dir, intro string, rows []Row) error {
	md := Markdown(rows)
	if intro != "" {
		md = intro + "\n\n" + md
	}
	if err := os.WriteFile(filepath.Join(dir, MarkdownFile), []byte(md), 0o644); err != nil {
		return fmt.Errorf("writing the Markdown table: %w", err)
	}
	f, err := os.Create(filepath.Join(dir, CSVFile))
	if err != nil {
		return fmt.Errorf("writing the CSV: %w", err)
	}
	w := csv.NewWriter(f)
	w.Write(CSVHeader)
	for _, r := range rows {
		rss := make([]string, len(r.PeakRSS))
		for i, b := range r.PeakRSS {
			rss[i] = strconv.FormatInt(b, 10)
		}
		w.Write([]string{
			r.Engine, strconv.Itoa(r.Ply), strconv.Itoa(r.Processes), ff(r.Load, 2), ff(r.Wall, 6), ff(r.CPU, 6), ff(r.ServerCPU, 6),
			i64(r.Positions), i64(r.Edges), ff(float64(r.Edges)/r.Wall, 0),
			i64(r.TxEnum), i64(r.TxDedup), i64(r.TxResults), i64(r.TxOther), i64(r.TxTotal()), ff(perEdge(r.TxTotal(), r), 6),
			i64(r.StoredBytes), ff(perPosition(r.StoredBytes, r), 2), i64(r.PeakDisk), strings.Join(rss, " "),
			i64(r.MergedKeys), ff(perPosition(r.MergedKeys, r), 3), r.Root, r.Check,
		})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return fmt.Errorf("writing the CSV: %w", err)
	}
	return f.Close()
}

// Markdown renders the rows as a table. Transactions are per edge,
// through the row's ply; "-" marks figures an engine does not have.
func Markdown(rows []Row) string {
	var b strings.Builder
	b.WriteString("| engine | ply | wall s | CPU s (+Azurite) | edges/s | tx/edge enum | tx/edge dedup | tx/edge results | tx/edge total | bytes stored/position | peak disk MB | peak RSS MiB per process | merged keys/position | load | check |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
	for _, r := range rows {
		tx := func(n int64) string {
			if r.TxTotal() == 0 {
				return "-"
			}
			return ff(perEdge(n, r), 5)
		}
		stored, merged, disk := "-", "-", "-"
		if r.PeakDisk > 0 {
			disk = ff(float64(r.PeakDisk)/1e6, 0)
		}
		if r.StoredBytes > 0 {
			stored = ff(perPosition(r.StoredBytes, r), 1)
		}
		if r.MergedKeys > 0 {
			merged = ff(perPosition(r.MergedKeys, r), 2)
		}
		rss := make([]string, len(r.PeakRSS))
		for i, v := range r.PeakRSS {
			rss[i] = strconv.FormatInt(v>>20, 10)
		}
		cpu := ff(r.CPU, 3)
		if r.ServerCPU > 0 {
			cpu += fmt.Sprintf(" (+%s)", ff(r.ServerCPU, 1))
		}
		engine := r.Engine
		if r.Processes > 1 {
			engine = fmt.Sprintf("%s (%d workers)", r.Engine, r.Processes)
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			engine, r.Ply, ff(r.Wall, 3), cpu, ff(float64(r.Edges)/r.Wall, 0),
			tx(r.TxEnum), tx(r.TxDedup), tx(r.TxResults), tx(r.TxTotal()), stored, disk,
			strings.Join(rss, " / "), merged, ff(r.Load, 1), r.Check)
	}
	return b.String()
}

func ff(f float64, prec int) string { return strconv.FormatFloat(f, 'f', prec, 64) }
func i64(n int64) string            { return strconv.FormatInt(n, 10) }
