/// Where a file lives: its device and inode, as a scan saw them. A rename keeps them, so a later
/// sync knows the file as the track it was (`MovePlan`).
public struct FilePlace: Sendable, Equatable {
    public var device: Int64
    public var inode: Int64

    public init(device: Int64, inode: Int64) {
        self.device = device
        self.inode = inode
    }
}
