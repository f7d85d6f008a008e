@testable import CoreDataStore
import Foundation

import Testing
import SeededRandom

@Suite("Binary property lists and keyed archives")
struct PropertyListTests {
    @Test("values round-trip through the binary encoder and decoder")
    func roundTrip() throws {
        let value = PropertyListValue.dictionary([
            "int": .integer(-5), "big": .integer(1 << 40), "real": .real(1.5), "bool": .bool(true),
            "ascii": .string("hello"), "unicode": .string("横浜 Zürich"), "data": .data(Data([0, 1, 2, 255])),
            "array": .array([.integer(1), .string("two"), .uid(7)]), "set": .set([.string("x")]),
            "date": .date(737_057_647.288022), "long": .string(String(repeating: "a", count: 300)),
        ])
        #expect(try BinaryPropertyList.decode(BinaryPropertyList.encode(value)) == value)
    }

    @Test("hostile bytes are rejected, never crash")
    func hostileInput() {
        var generator = SeededGenerator(seed: 42)
        let valid = BinaryPropertyList.encode(.array([.string("a"), .dictionary(["k": .integer(1)])]))
        for length in [0, 7, 8, 39, 40, valid.count - 1] {
            #expect(throws: BinaryPropertyList.DecodingError.self) { try BinaryPropertyList.decode(valid.prefix(length)) }
        }
        for _ in 0..<300 {
            var bytes = [UInt8](valid)
            for _ in 0..<3 { bytes[Int.random(in: 8..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator) }
            _ = try? BinaryPropertyList.decode(Data(bytes)) // must return or throw, never trap
        }
        // An array that contains itself.
        var cyclic = Array("bplist00".utf8) + [0xA1, 0x00]
        let table = cyclic.count
        cyclic += [8]
        cyclic += [0, 0, 0, 0, 0, 0, 1, 1] + [0, 0, 0, 0, 0, 0, 0, 1] + [0, 0, 0, 0, 0, 0, 0, 0] + [0, 0, 0, 0, 0, 0, 0, UInt8(table)]
        #expect(throws: BinaryPropertyList.DecodingError.self) { try BinaryPropertyList.decode(Data(cyclic)) }
    }

    @Test("raw DEFLATE round-trips and rejects garbage")
    func deflate() throws {
        let text = Data(String(repeating: "Core Data model cache ", count: 500).utf8)
        #expect(try RawDeflate.inflate(RawDeflate.deflate(text)) == text)
        #expect(throws: RawDeflate.Error.self) { try RawDeflate.inflate(Data([0xFF, 0xFF, 0xFF, 0x00])) }
        #expect(throws: RawDeflate.Error.self) { try RawDeflate.inflate(RawDeflate.deflate(text), limit: 100) }
    }

    @Test("SHA-2 matches published test vectors")
    func sha2() {
        let hex = { (bytes: [UInt8]) in bytes.map { String(format: "%02x", $0) }.joined() }
        #expect(hex(SHA2.sha256(Data("abc".utf8))) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(hex(SHA2.sha512(Data("abc".utf8))).hasPrefix("ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"))
        #expect(hex(SHA2.sha256(Data(repeating: 0x61, count: 1000))) == "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3")
    }
}
