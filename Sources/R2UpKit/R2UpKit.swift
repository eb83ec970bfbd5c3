// The model's values (UploadState, TrackIcon, FailureKind, Diagnosis, …) are part of what an
// app reads from R2UpKit: re-exported, so `import R2UpKit` is all an app or the CLI writes.
// The store and the transfer layer are not re-exported: they stay behind this layer.
@_exported public import R2UpModel
// A finished upload (seed 002's UploadItem) is what a push gives an app; the rest of the store is not.
@_exported public import struct R2UpStore.UploadItem
