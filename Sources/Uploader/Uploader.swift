@_exported import SigV4
