package localdriver

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"k8s.io/klog/v2"
)

// ID prefixes. The rest of an ID is 26 characters of lower-case base32 from
// crypto/rand.Text, so IDs are safe as file names and never collide.
const (
	volumePrefix   = "vol-"
	snapshotPrefix = "snap-"
	metaSuffix     = ".json"
	tempPrefix     = ".tmp-"
)

var (
	volumeIDPattern   = regexp.MustCompile(`^vol-[a-z2-7]{26}$`)
	snapshotIDPattern = regexp.MustCompile(`^snap-[a-z2-7]{26}$`)
)

func newVolumeID() string   { return volumePrefix + strings.ToLower(rand.Text()) }
func newSnapshotID() string { return snapshotPrefix + strings.ToLower(rand.Text()) }

// layout names the files below the state directory.
type layout struct {
	root string
}

func (l layout) volumesDir() string            { return filepath.Join(l.root, "volumes") }
func (l layout) snapshotsDir() string          { return filepath.Join(l.root, "snapshots") }
func (l layout) volumeDir(id string) string    { return filepath.Join(l.volumesDir(), id) }
func (l layout) volumeMeta(id string) string   { return l.volumeDir(id) + metaSuffix }
func (l layout) snapshotDir(id string) string  { return filepath.Join(l.snapshotsDir(), id) }
func (l layout) snapshotMeta(id string) string { return l.snapshotDir(id) + metaSuffix }

// tempPath returns where to write path's content before renaming it into
// place; load removes such files.
func tempPath(path string) string {
	return filepath.Join(filepath.Dir(path), tempPrefix+filepath.Base(path))
}

// volumeRecord is the metadata of a volume, stored as <id>.json.
type volumeRecord struct {
	ID            string        `json:"id"`
	Name          string        `json:"name"`
	CapacityBytes int64         `json:"capacityBytes"`
	Source        *sourceRecord `json:"source,omitempty"`
	CreationTime  time.Time     `json:"creationTime"`
	// MutableParameters are CreateVolume's, as ControllerModifyVolume last
	// changed them.
	MutableParameters map[string]string `json:"mutableParameters,omitempty"`
}

// sourceRecord is the content source a volume was created from: exactly one
// field is set.
type sourceRecord struct {
	SnapshotID string `json:"snapshotID,omitempty"`
	VolumeID   string `json:"volumeID,omitempty"`
}

// sourceFrom returns the record of a CreateVolume content source, or nil for
// an empty volume.
func sourceFrom(src *csi.VolumeContentSource) *sourceRecord {
	switch {
	case src.GetSnapshot() != nil:
		return &sourceRecord{SnapshotID: src.GetSnapshot().GetSnapshotId()}
	case src.GetVolume() != nil:
		return &sourceRecord{VolumeID: src.GetVolume().GetVolumeId()}
	default:
		return nil
	}
}

// contentSource turns the record back into the CSI message that CreateVolume
// echoes.
func (s *sourceRecord) contentSource() *csi.VolumeContentSource {
	switch {
	case s == nil:
		return nil
	case s.SnapshotID != "":
		return &csi.VolumeContentSource{Type: &csi.VolumeContentSource_Snapshot{
			Snapshot: &csi.VolumeContentSource_SnapshotSource{SnapshotId: s.SnapshotID},
		}}
	default:
		return &csi.VolumeContentSource{Type: &csi.VolumeContentSource_Volume{
			Volume: &csi.VolumeContentSource_VolumeSource{VolumeId: s.VolumeID},
		}}
	}
}

// snapshotRecord is the metadata of a snapshot, stored as <id>.json.
type snapshotRecord struct {
	ID             string    `json:"id"`
	Name           string    `json:"name"`
	SourceVolumeID string    `json:"sourceVolumeID"`
	SizeBytes      int64     `json:"sizeBytes"`
	CreationTime   time.Time `json:"creationTime"`
	ReadyToUse     bool      `json:"readyToUse"`
}

// load reads the metadata below the state directory into the maps and
// removes what interrupted calls left behind. Called once, by New.
func (d *Driver) load(ctx context.Context) error {
	vols, err := loadRecords(ctx, d.layout.volumesDir(), volumeIDPattern,
		func(r *volumeRecord) string { return r.ID })
	if err != nil {
		return fmt.Errorf("load volumes: %w", err)
	}
	snaps, err := loadRecords(ctx, d.layout.snapshotsDir(), snapshotIDPattern,
		func(r *snapshotRecord) string { return r.ID })
	if err != nil {
		return fmt.Errorf("load snapshots: %w", err)
	}
	d.volumes, d.volumeByName = vols, make(map[string]string, len(vols))
	for id, v := range vols {
		d.volumeByName[v.Name] = id
	}
	d.snapshots, d.snapshotByName = snaps, make(map[string]string, len(snaps))
	for id, s := range snaps {
		d.snapshotByName[s.Name] = id
	}
	return nil
}

// loadRecords reads every <id>.json in dir whose <id> matches idPattern and
// whose data directory <id>/ exists, creating dir if needed. It removes
// temporary files and data directories without metadata: both are left
// over from calls that did not finish.
func loadRecords[R any](ctx context.Context, dir string, idPattern *regexp.Regexp, idOf func(*R) string) (map[string]*R, error) {
	logger := klog.FromContext(ctx)
	if err := mkdirAll(dir); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", dir, err)
	}
	records := map[string]*R{}
	dataDirs := map[string]bool{}
	for _, e := range entries {
		name := e.Name()
		switch {
		case strings.HasPrefix(name, tempPrefix):
			logger.Info("Removing leftover temporary file", "path", filepath.Join(dir, name))
			if err := os.RemoveAll(filepath.Join(dir, name)); err != nil {
				return nil, fmt.Errorf("remove leftover: %w", err)
			}
		case e.IsDir() && idPattern.MatchString(name):
			dataDirs[name] = true
		case !e.IsDir() && strings.HasSuffix(name, metaSuffix) && idPattern.MatchString(strings.TrimSuffix(name, metaSuffix)):
			r, err := readRecord[R](filepath.Join(dir, name))
			if err != nil {
				return nil, err
			}
			id := strings.TrimSuffix(name, metaSuffix)
			if idOf(r) != id {
				return nil, fmt.Errorf("%s holds the record of %q", filepath.Join(dir, name), idOf(r))
			}
			records[id] = r
		default:
			logger.Info("Ignoring unexpected file in state directory", "path", filepath.Join(dir, name))
		}
	}
	for id := range records {
		if !dataDirs[id] {
			// Someone removed the data behind the driver's back. Keep the
			// metadata for a person to look at, but do not serve it.
			logger.Error(nil, "Ignoring metadata without data directory", "path", filepath.Join(dir, id+metaSuffix))
			delete(records, id)
		}
	}
	for id := range dataDirs {
		if _, ok := records[id]; !ok {
			logger.Info("Removing data directory without metadata", "path", filepath.Join(dir, id))
			if err := os.RemoveAll(filepath.Join(dir, id)); err != nil {
				return nil, fmt.Errorf("remove leftover: %w", err)
			}
		}
	}
	return records, nil
}

func readRecord[R any](path string) (*R, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read metadata: %w", err)
	}
	r := new(R)
	if err := json.Unmarshal(data, r); err != nil {
		return nil, fmt.Errorf("decode metadata %s: %w", path, err)
	}
	return r, nil
}

// writeRecord stores r as JSON at path, atomically: it writes a temporary
// file in the same directory, syncs it and renames it over path, so a crash
// leaves either the old file or the new one.
func writeRecord(path string, r any) (err error) {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode metadata: %w", err)
	}
	tmp := tempPath(path)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("write metadata: %w", err)
	}
	defer func() {
		if err != nil {
			_ = os.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return fmt.Errorf("write metadata: %w", err)
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return fmt.Errorf("sync metadata: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write metadata: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("commit metadata: %w", err)
	}
	return nil
}

// createObject creates an object's data directory, fills it with a copy of
// src unless src is empty, and then commits the object by writing its
// metadata. If a step fails it removes what it made.
func createObject(ctx context.Context, dataDir, src, metaPath string, record any) error {
	if err := os.Mkdir(dataDir, 0o755); err != nil {
		return fmt.Errorf("create data directory: %w", err)
	}
	err := func() error {
		if src != "" {
			if err := copyTree(ctx, src, dataDir); err != nil {
				return fmt.Errorf("copy %s: %w", src, err)
			}
		}
		return writeRecord(metaPath, record)
	}()
	if err != nil {
		if rmErr := os.RemoveAll(dataDir); rmErr != nil {
			klog.FromContext(ctx).Error(rmErr, "Could not remove data of failed creation; the next start removes it", "path", dataDir)
		}
		return err
	}
	return nil
}

// removeObject deletes an object's metadata first and then its data, so an
// interruption leaves a data directory that the next start removes, never
// metadata that points at missing data.
func removeObject(metaPath, dataDir string) error {
	if err := os.Remove(metaPath); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove metadata: %w", err)
	}
	if err := os.RemoveAll(dataDir); err != nil {
		return fmt.Errorf("remove data: %w", err)
	}
	return nil
}

// StoredVolume is what a driver's state directory records of a volume, for
// tests that reconcile the driver's state with a cluster's.
type StoredVolume struct {
	ID, Name string
	// SourceSnapshotID or SourceVolumeID names the content source, if any.
	SourceSnapshotID, SourceVolumeID string
	// DataDir holds the volume's data.
	DataDir string
}

// ReadStoredVolumes reads the volumes recorded below stateDir, as a driver
// started on it would load them, without changing anything.
func ReadStoredVolumes(stateDir string) ([]StoredVolume, error) {
	l := layout{root: stateDir}
	metas, err := filepath.Glob(filepath.Join(l.volumesDir(), volumePrefix+"*"+metaSuffix))
	if err != nil {
		return nil, err
	}
	var out []StoredVolume
	for _, m := range metas {
		r, err := readRecord[volumeRecord](m)
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted meanwhile
		}
		if err != nil {
			return nil, err
		}
		v := StoredVolume{ID: r.ID, Name: r.Name, DataDir: l.volumeDir(r.ID)}
		if r.Source != nil {
			v.SourceSnapshotID, v.SourceVolumeID = r.Source.SnapshotID, r.Source.VolumeID
		}
		out = append(out, v)
	}
	return out, nil
}
