// The model's values (UploadState, TrackIcon, FailureKind, Diagnosis, …) are part of what an
// app reads from R2UpKit: re-exported, so `import R2UpKit` is all an app or the CLI writes.
// The store and the transfer layer are not re-exported: they stay behind this layer.
@_exported public import R2UpModel
