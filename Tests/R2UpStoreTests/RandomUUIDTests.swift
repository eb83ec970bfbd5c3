import Foundation
import Testing
import R2UpStore
import R2UpModel

@Suite("Random UUIDs")
struct RandomUUIDTests {
    @Test("version 4, RFC 4122 variant, all different")
    func versionAndVariant() {
        let ids = (0..<1000).map { _ in UUID.randomVersion4() }
        #expect(Set(ids).count == 1000)
        for id in ids {
            let text = id.uuidString
            let characters = Array(text)
            #expect(characters[14] == "4", "version nibble of \(text)")
            #expect("89AB".contains(characters[19]), "variant of \(text)")
            #expect(UUID(uuidString: text) == id)
        }
    }
}
