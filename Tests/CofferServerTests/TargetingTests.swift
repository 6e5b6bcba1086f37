import BlockingTestSupport
import Foundation
@testable import CofferServer
import Testing

/// The targeting-rule engine: conditions, versions, rollout buckets and device attributes.
@Suite("Targeting rules")
struct TargetingTests {
    /// The reason `text` is refused with, or nil if it parses.
    static func refusal(_ text: String) -> String? {
        do throws(TargetingError) {
            _ = try TargetingCondition(parsing: text)
            return nil
        } catch {
            return error.reason
        }
    }

    /// The reason `query` is refused with, or nil if it is accepted.
    static func refusal(query: [String: String]) -> String? {
        do throws(TargetingError) {
            _ = try DeviceAttributes(query: query)
            return nil
        } catch {
            return error.reason
        }
    }

    /// A device that sends every attribute.
    static let tablet = DeviceAttributes(
        deviceID: "tablet-1", deviceClass: "tablet", osName: "iPadOS", osVersion: "17.4", appVersion: "3.2.1",
        language: "en-GB", region: "US", arch: "arm64", memoryGiB: 8, custom: ["tier": "gold"])
    /// A device that sends nothing but its ID.
    static let bare = DeviceAttributes(deviceID: "bare-1")

    /// `tablet` with one attribute changed.
    static func tablet(_ change: (inout DeviceAttributes) -> Void) -> DeviceAttributes {
        var device = tablet
        change(&device)
        return device
    }

    // MARK: Versions

    @Test("versions that parse keep their components", arguments: [
        ("17", [17]), ("17.4", [17, 4]), ("17.4.1", [17, 4, 1]), ("1.2.3.4", [1, 2, 3, 4]), ("0", [0]),
        ("999999", [999_999]), ("017.04", [17, 4]), ("999999.999999.999999.999999", [999_999, 999_999, 999_999, 999_999]),
    ])
    func versionParses(text: String, components: [Int]) {
        #expect(Version(text)?.components == components)
    }

    @Test("anything else is not a version", arguments: [
        "", ".", "17.", ".17", "17..4", "1.2.3.4.5", "1000000", "17.1000000", "99999999999999999999999", "17.x", "x",
        "-1", "+1", " 17", "17 ", "17.4-beta", "17.4 (21E236)", "1e3", "0x10", "17,4", "١٧", "１７",
    ])
    func notAVersion(text: String) {
        #expect(Version(text) == nil)
    }

    @Test("versions compare component by component as integers", arguments: [
        ("17.10", "17.9", 1), ("17", "17.0.0", 0), ("17.0", "17", 0), ("17.4", "17.4.0.0", 0), ("17.0.1", "17", 1),
        ("999999", "999998", 1), ("1.0.0.1", "1", 1), ("2", "10", -1), ("0.0.0.0", "0", 0), ("16.7.8", "17", -1),
    ])
    func versionOrder(lhs: String, rhs: String, order: Int) throws {
        let a = try #require(Version(lhs)), b = try #require(Version(rhs))
        #expect((a < b) == (order < 0) && (b < a) == (order > 0) && (a == b) == (order == 0))
    }

    // MARK: Parsing

    @Test("refused conditions say what is wrong and name the clause", arguments: [
        ("colour=red", "unknown attribute 'colour' in clause 'colour=red'"),
        ("deviceclass=tablet", "unknown attribute 'deviceclass' (did you mean 'deviceClass'?) in clause 'deviceclass=tablet'"),
        ("memoryGiB>=4", "unknown attribute 'memoryGiB' (did you mean 'memory'?) in clause 'memoryGiB>=4'"),
        ("Custom.tier=gold", "unknown attribute 'Custom.tier' (did you mean 'custom.tier'?) in clause 'Custom.tier=gold'"),
        ("custom.=x", "custom attribute name '' must be 1 to 64 of A-Z a-z 0-9 _ . - in clause 'custom.=x'"),
        ("custom.a b=x", "custom attribute name 'a b' must be 1 to 64 of A-Z a-z 0-9 _ . - in clause 'custom.a b=x'"),
        ("deviceClass>=tablet", "deviceClass takes = or !=, not >= in clause 'deviceClass>=tablet'"),
        ("language<en", "language takes = or !=, not < in clause 'language<en'"),
        ("rollout!=10", "rollout takes only =, not != in clause 'rollout!=10'"),
        ("deviceClass=fridge",
         "unknown device class 'fridge' (use phone, tablet, desktop, tv, watch, vision, server or embedded) in clause 'deviceClass=fridge'"),
        ("osVersion>=17.x", "'17.x' is not a version (use numbers like 17.4) in clause 'osVersion>=17.x'"),
        ("osVersion=1.2.3.4.5", "'1.2.3.4.5' is not a version (use numbers like 17.4) in clause 'osVersion=1.2.3.4.5'"),
        ("appVersion<1000000", "'1000000' is not a version (use numbers like 17.4) in clause 'appVersion<1000000'"),
        ("osVersion<17,18", "< takes one value, not a list in clause 'osVersion<17,18'"),
        ("rollout=0", "rollout must be a percentage in (0, 100] with at most 2 decimals, not '0' in clause 'rollout=0'"),
        ("rollout=100.01", "rollout must be a percentage in (0, 100] with at most 2 decimals, not '100.01' in clause 'rollout=100.01'"),
        ("rollout=12.345", "rollout must be a percentage in (0, 100] with at most 2 decimals, not '12.345' in clause 'rollout=12.345'"),
        ("rollout=-5", "rollout must be a percentage in (0, 100] with at most 2 decimals, not '-5' in clause 'rollout=-5'"),
        ("rollout=ten", "rollout must be a percentage in (0, 100] with at most 2 decimals, not 'ten' in clause 'rollout=ten'"),
        ("rollout=10,20", "rollout takes one percentage, not a list in clause 'rollout=10,20'"),
        ("rollout=10; rollout=20", "a second rollout clause (only one is allowed) in clause 'rollout=20'"),
        ("region=USA", "'USA' is not a region (use two letters like US, or three digits like 419) in clause 'region=USA'"),
        ("language=english", "'english' is not a language tag (use BCP 47 like en or en-GB) in clause 'language=english'"),
        ("language=en_GB", "'en_GB' is not a language tag (use BCP 47 like en or en-GB) in clause 'language=en_GB'"),
        ("arch=arm 64", "'arm 64' is not an architecture (use a name like arm64 or x86_64) in clause 'arch=arm 64'"),
        ("memory>=lots",
         "'lots' is not an amount of memory (use GiB like 4 or 1.5, at most 1000000 and 3 decimals) in clause 'memory>=lots'"),
        ("memory>=1e3",
         "'1e3' is not an amount of memory (use GiB like 4 or 1.5, at most 1000000 and 3 decimals) in clause 'memory>=1e3'"),
        ("memory>=4.0001",
         "'4.0001' is not an amount of memory (use GiB like 4 or 1.5, at most 1000000 and 3 decimals) in clause 'memory>=4.0001'"),
        ("region", "no operator (use =, !=, <, <=, >, >=) in clause 'region'"),
        ("region!US", "'!' must be followed by '=' in clause 'region!US'"),
        ("=US", "missing attribute name before = in clause '=US'"),
        ("region=", "missing value after = in clause 'region='"),
        ("region==US", "more than one operator in clause 'region==US'"),
        ("osVersion=>17", "more than one operator in clause 'osVersion=>17'"),
        ("region=US,,CA", "an empty value in the list in clause 'region=US,,CA'"),
        ("region=US;", "clause 2 of the condition is empty (remove the extra ';')"),
        ("region=US;;arch=arm64", "clause 2 of the condition is empty (remove the extra ';')"),
        ("*; region=US", "'*' means every device and cannot be combined with other clauses in clause '*'"),
        ("region=US\tCA", "the condition contains control character U+0009 at character 10; write it on one line without control characters"),
    ])
    func refused(text: String, reason: String) {
        #expect(Self.refusal(text) == reason)
    }

    @Test("control and format characters are refused anywhere", arguments: [
        "\n", "\r", "\u{0}", "\u{7F}", "\u{85}", "\u{202E}", "\u{200B}", "\u{2028}", "\u{FEFF}",
    ])
    func controlCharacters(character: String) {
        for text in [character + "region=US", "region=US" + character, "custom.x=a" + character + "b"] {
            #expect(Self.refusal(text)?.hasPrefix("the condition contains control character U+") == true)
        }
    }

    @Test("a long clause is cut in the message, which stays one line")
    func longClauseQuoted() throws {
        let name = String(repeating: "n", count: 300)
        let reason = try #require(Self.refusal(name + "=1"))
        #expect(reason == "unknown attribute '\(String(repeating: "n", count: 60))…' in clause '\(String(repeating: "n", count: 60))…'")
    }

    @Test("limits: length, clauses, value length and list size")
    func limits() {
        let padded = String(repeating: " ", count: 991) + "region=US"
        #expect(padded.count == 1000 && Self.refusal(padded) == nil)
        #expect(Self.refusal(" " + padded) == "the condition is longer than 1000 characters")

        let twenty = (1...20).map { "custom.k\($0)=v" }
        #expect(Self.refusal(twenty.joined(separator: ";")) == nil)
        #expect(Self.refusal((twenty + ["region=US"]).joined(separator: ";")) == "the condition has 21 clauses; the limit is 20")

        #expect(Self.refusal("osName=" + String(repeating: "x", count: 100)) == nil)
        #expect(Self.refusal("osName=" + String(repeating: "x", count: 101))?
            .hasPrefix("a value longer than 100 characters in clause 'osName=xxx") == true)

        let items = (1...51).map { "v\($0)" }
        #expect(Self.refusal("custom.k=" + items.prefix(50).joined(separator: ",")) == nil)
        #expect(Self.refusal("custom.k=" + items.joined(separator: ","))?
            .hasPrefix("a list of 51 values (the limit is 50) in clause") == true)
    }

    @Test("a condition that normalising would make longer than 1000 characters is refused")
    func normalisedLength() throws {
        var clauses = (10..<30).map { "custom.k\($0)=" + String(repeating: "v", count: 38) }
        let tight = clauses.joined(separator: ";")
        clauses[19] += String(repeating: "v", count: 1000 - tight.count)
        let text = clauses.joined(separator: ";")
        try #require(text.count == 1000)
        #expect(Self.refusal(text) == "the condition is longer than 1000 characters once normalised (clauses joined by '; ')")
        #expect(Self.refusal(clauses.dropLast().joined(separator: ";")) == nil)
    }

    // MARK: Normalised text

    static let normalisations: [(String, String)] = [
        ("deviceClass = Tablet ;osVersion >= 17 ; osVersion<18;region=us, ca;rollout = 10",
         "deviceClass=tablet; osVersion>=17; osVersion<18; region=US,CA; rollout=10"),
        ("", "*"), ("   ", "*"), (" * ", "*"),
        ("rollout=12.50", "rollout=12.5"), ("rollout=10%", "rollout=10"), ("rollout=10 %", "rollout=10"),
        ("rollout=0.01", "rollout=0.01"), ("rollout=100.00", "rollout=100"), ("rollout=05", "rollout=5"),
        ("osVersion>=017.04", "osVersion>=17.4"), ("appVersion=17.0", "appVersion=17.0"),
        ("language=EN-gb,zh-hant-tw,es-419", "language=en-GB,zh-Hant-TW,es-419"),
        ("memory>=04.50", "memory>=4.5"), ("memory<0.125", "memory<0.125"), ("memory=4,8", "memory=4,8"),
        ("arch=ARM64", "arch=arm64"), ("osName=iOS", "osName=iOS"), ("osName=Windows Phone", "osName=Windows Phone"),
        ("custom.Tier=Gold Plus", "custom.Tier=Gold Plus"), ("region!=419", "region!=419"),
        ("deviceClass!=TV,Watch", "deviceClass!=tv,watch"), ("custom.x=é", "custom.x=é"),
    ]

    @Test("conditions are stored in a normalised text", arguments: normalisations)
    func normalised(text: String, normal: String) throws {
        #expect(try TargetingCondition(parsing: text).text == normal)
    }

    @Test("the normalised text parses to an equal condition", arguments: normalisations)
    func roundTrip(text: String, normal: String) throws {
        let condition = try TargetingCondition(parsing: text)
        let again = try TargetingCondition(parsing: condition.text)
        #expect(again == condition && again.clauses == condition.clauses && again.text == condition.text)
    }

    @Test("conditions are equal when their normalised texts are")
    func equality() throws {
        #expect(try TargetingCondition(parsing: " osVersion >= 17 ") == TargetingCondition(parsing: "osVersion>=17"))
        #expect(try TargetingCondition(parsing: "region=us") == TargetingCondition(parsing: "region=US"))
        #expect(try TargetingCondition(parsing: "region=US") != TargetingCondition(parsing: "region=CA"))
        #expect(try TargetingCondition(parsing: "") == TargetingCondition.everyDevice)
    }

    @Test("the rollout percentage in basis points", arguments: [
        ("rollout=10", 1000), ("rollout=0.01", 1), ("rollout=100", 10_000), ("rollout=12.5%", 1250),
        ("region=US; rollout=33.33", 3333), ("region=US", nil), ("*", nil),
    ] as [(String, Int?)])
    func rolloutBasisPoints(text: String, basisPoints: Int?) throws {
        #expect(try TargetingCondition(parsing: text).rolloutBasisPoints == basisPoints)
    }

    // MARK: Matching

    @Test("matching", arguments: [
        // Every device, and AND of clauses.
        ("*", bare, 0, true), ("", tablet, 9999, true),
        ("deviceClass=tablet; osVersion>=17; osVersion<18; region=US,CA", tablet, 0, true),
        ("deviceClass=tablet; osVersion>=17; osVersion<18; region=CA", tablet, 0, false),
        // Versions: integers per component, missing components are 0.
        ("osVersion>17.9", tablet { $0.osVersion = "17.10" }, 0, true),
        ("osVersion>=17.10", tablet { $0.osVersion = "17.9" }, 0, false),
        ("osVersion=17.0.0", tablet { $0.osVersion = "17" }, 0, true),
        ("osVersion!=17.0", tablet { $0.osVersion = "17" }, 0, false),
        ("osVersion>=17; osVersion<18", tablet { $0.osVersion = "17.9.9" }, 0, true),
        ("osVersion>=17; osVersion<18", tablet { $0.osVersion = "18" }, 0, false),
        ("osVersion>=17; osVersion<18", tablet { $0.osVersion = "16.7" }, 0, false),
        ("osVersion>=999999", tablet { $0.osVersion = "999999" }, 0, true),
        ("osVersion<999999", tablet { $0.osVersion = "999999" }, 0, false),
        ("osVersion<=999999.999999.999999.999999", tablet { $0.osVersion = "999999.999999.999999.999999" }, 0, true),
        ("osVersion=16,17.4", tablet, 0, true), ("osVersion!=16,17.4", tablet, 0, false),
        ("appVersion>=3.2; appVersion<3.10", tablet, 0, true),
        // A device version that is not a version makes every version clause false.
        ("osVersion>=1", tablet { $0.osVersion = "1.2.3.4.5" }, 0, false),
        ("osVersion!=1", tablet { $0.osVersion = "1.2.3.4.5" }, 0, false),
        ("osVersion<99", tablet { $0.osVersion = "17.4-beta" }, 0, false),
        ("osVersion<99", tablet { $0.osVersion = "1000000" }, 0, false),
        // Comma lists: any of them, or none of them.
        ("region=US,CA", tablet { $0.region = "CA" }, 0, true), ("region=US,CA", tablet { $0.region = "MX" }, 0, false),
        ("region!=US,CA", tablet { $0.region = "MX" }, 0, true), ("region!=US,CA", tablet { $0.region = "CA" }, 0, false),
        // Case: ignored except for custom attributes.
        ("deviceClass=TABLET", tablet { $0.deviceClass = "Tablet" }, 0, true),
        ("osName=ipados", tablet, 0, true), ("region=us", tablet { $0.region = "Us" }, 0, true),
        ("arch=ARM64", tablet, 0, true), ("osName!=IPADOS", tablet, 0, false),
        ("custom.tier=gold", tablet, 0, true), ("custom.tier=Gold", tablet, 0, false),
        ("custom.Tier=gold", tablet, 0, false), ("custom.tier!=silver", tablet, 0, true),
        // Memory.
        ("memory>=7.5", tablet { $0.memoryGiB = 7.5 }, 0, true), ("memory<8", tablet, 0, false),
        ("memory=4,8", tablet, 0, true), ("memory>0.1", tablet { $0.memoryGiB = 0.1 }, 0, false),
        ("memory!=4", tablet { $0.memoryGiB = .nan }, 0, false), ("memory>=0", tablet { $0.memoryGiB = -1 }, 0, false),
        // Rollout: bucket below P × 100.
        ("rollout=10", tablet, 999, true), ("rollout=10", tablet, 1000, false), ("rollout=0.01", tablet, 0, true),
        ("rollout=0.01", tablet, 1, false), ("rollout=100", tablet, 9999, true), ("rollout=100", tablet, 10_000, false),
        ("rollout=100", tablet, -1, false), ("region=US; rollout=50", tablet, 4999, true),
        ("region=US; rollout=50", tablet, 5000, false), ("region=CA; rollout=50", tablet, 0, false),
    ] as [(String, DeviceAttributes, Int, Bool)])
    func matching(text: String, device: DeviceAttributes, bucket: Int, expected: Bool) throws {
        #expect(try TargetingCondition(parsing: text).matches(device, bucket: bucket) == expected)
    }

    @Test("a bare language matches every tag of that language; a tag with subtags only itself", arguments: [
        ("language=en", "en", true), ("language=en", "en-GB", true), ("language=en", "EN-us", true),
        ("language=en", "en_GB", true), ("language=en", "eng", false), ("language=en", "fr", false),
        ("language=en", "e", false), ("language=en-GB", "en-GB", true), ("language=en-GB", "en-gb", true),
        ("language=en-GB", "en_GB", true), ("language=en-GB", "en", false), ("language=en-GB", "en-US", false),
        ("language=en-GB", "en-GB-oxendict", false), ("language=fr,de", "de-CH", true), ("language!=en", "fr", true),
        ("language!=en", "en-GB", false), ("language!=en-GB", "en-US", true), ("language=zh-Hant", "zh-hant", true),
    ])
    func language(text: String, tag: String, expected: Bool) throws {
        #expect(try TargetingCondition(parsing: text).matches(Self.tablet { $0.language = tag }, bucket: 0) == expected)
    }

    @Test("a clause about an attribute the device did not send is false, even with !=", arguments: [
        "deviceClass!=tablet", "osName!=iOS", "osVersion!=1", "osVersion<999999", "appVersion!=1", "language!=en",
        "region!=US", "arch!=arm64", "memory!=4", "memory>=0", "custom.tier!=gold",
    ])
    func absent(text: String) throws {
        let condition = try TargetingCondition(parsing: text)
        #expect(!condition.matches(Self.bare, bucket: 0))
        let empty = DeviceAttributes(
            deviceID: "empty", deviceClass: "", osName: "", osVersion: "", appVersion: "", language: "", region: "", arch: "",
            custom: ["tier": ""])
        #expect(!condition.matches(empty, bucket: 0))
    }

    // MARK: Rollout buckets

    @Test("buckets follow the documented formula", arguments: [
        // Computed independently with Python's hashlib.
        ("dep-1", "device-1", 1514), ("", "", 7863), ("seed", "iPhone-ABC", 6744), ("deployment 42", "ü-device", 9471),
    ])
    func bucketVectors(seed: String, deviceID: String, bucket: Int) {
        #expect(RolloutBucket.bucket(deviceID: deviceID, seed: seed) == bucket)
    }

    /// 10 000 device IDs.
    static let deviceIDs = (0..<10_000).map { "device-\($0)" }

    @Test("the same device and seed always give the same bucket")
    func bucketStable() {
        for id in Self.deviceIDs.prefix(1000) {
            #expect(RolloutBucket.bucket(deviceID: id, seed: "D") == RolloutBucket.bucket(deviceID: id, seed: "D"))
        }
    }

    @Test("buckets spread evenly: each tenth holds 800–1200 of 10 000 devices")
    func bucketDistribution() {
        var tenths = [Int](repeating: 0, count: 10)
        for id in Self.deviceIDs {
            let bucket = RolloutBucket.bucket(deviceID: id, seed: "deployment-A")
            #expect((0..<10_000).contains(bucket))
            tenths[min(9, max(0, bucket / 1000))] += 1
        }
        #expect(tenths.allSatisfy { (800...1200).contains($0) }, "\(tenths)")
    }

    @Test("raising a rollout keeps every device it had")
    func rolloutMonotonic() throws {
        let ten = try TargetingCondition(parsing: "rollout=10"), twenty = try TargetingCondition(parsing: "rollout=20")
        var atTen = 0, atTwenty = 0
        for id in Self.deviceIDs {
            let bucket = RolloutBucket.bucket(deviceID: id, seed: "deployment-B")
            if ten.matches(DeviceAttributes(deviceID: id), bucket: bucket) {
                atTen += 1
                #expect(twenty.matches(DeviceAttributes(deviceID: id), bucket: bucket), "\(id) lost at 20 %")
            }
            if twenty.matches(DeviceAttributes(deviceID: id), bucket: bucket) { atTwenty += 1 }
        }
        #expect((800...1200).contains(atTen), "\(atTen) devices at 10 %")
        #expect((1700...2300).contains(atTwenty), "\(atTwenty) devices at 20 %")
    }

    @Test("another seed gives most devices another bucket")
    func seedsDiffer() {
        let moved = Self.deviceIDs.count { RolloutBucket.bucket(deviceID: $0, seed: "A") != RolloutBucket.bucket(deviceID: $0, seed: "B") }
        #expect(moved >= 9900, "only \(moved) of 10 000 moved")
    }

    // MARK: Device attributes from a query

    @Test("queries that are accepted", arguments: [
        (["deviceID": "abc"], DeviceAttributes(deviceID: "abc")),
        ([
            "deviceID": "d", "deviceClass": "TV", "osName": "tvOS", "osVersion": "17.4", "appVersion": "anything",
            "language": "en_GB", "region": "gb", "arch": "arm64", "memoryGiB": "3.5", "custom.tier": "gold", "custom.a-b_c.d": "x y",
        ], DeviceAttributes(
            deviceID: "d", deviceClass: "tv", osName: "tvOS", osVersion: "17.4", appVersion: "anything", language: "en_GB",
            region: "gb", arch: "arm64", memoryGiB: 3.5, custom: ["tier": "gold", "a-b_c.d": "x y"])),
        (["deviceID": "d", "memoryGiB": "0"], DeviceAttributes(deviceID: "d", memoryGiB: 0)),
        (["deviceID": "d", "memoryGiB": "1e3"], DeviceAttributes(deviceID: "d", memoryGiB: 1000)),
        (["deviceID": "d", "region": "", "custom.x": "", "memoryGiB": ""], DeviceAttributes(deviceID: "d")),
        (["deviceID": String(repeating: "i", count: 200)], DeviceAttributes(deviceID: String(repeating: "i", count: 200))),
        (["deviceID": "d", "custom." + String(repeating: "n", count: 64): String(repeating: "v", count: 200)],
         DeviceAttributes(deviceID: "d", custom: [String(repeating: "n", count: 64): String(repeating: "v", count: 200)])),
    ] as [([String: String], DeviceAttributes)])
    func queryAccepted(query: [String: String], expected: DeviceAttributes) throws {
        #expect(try DeviceAttributes(query: query) == expected)
    }

    @Test("a memoryGiB of -0 is stored as 0")
    func negativeZero() throws {
        #expect(try DeviceAttributes(query: ["deviceID": "d", "memoryGiB": "-0"]).memoryGiB?.sign == .plus)
    }

    @Test("32 custom attributes are accepted, 33 refused")
    func customCount() {
        var query = ["deviceID": "d"]
        for index in 1...32 { query["custom.k\(index)"] = "v" }
        #expect(Self.refusal(query: query) == nil)
        query["custom.k33"] = "v"
        #expect(Self.refusal(query: query) == "33 custom attributes; the limit is 32")
    }

    @Test("queries that are refused", arguments: [
        ([:], "deviceID is missing"), (["deviceID": ""], "deviceID is missing"),
        (["deviceID": String(repeating: "i", count: 201)], "'deviceID' is longer than 200 characters"),
        (["deviceID": "d", "deviceClass": "fridge"],
         "unknown deviceClass 'fridge' (use phone, tablet, desktop, tv, watch, vision, server or embedded)"),
        (["deviceID": "d", "memoryGiB": "abc"], "memoryGiB must be a finite number >= 0, not 'abc'"),
        (["deviceID": "d", "memoryGiB": "-1"], "memoryGiB must be a finite number >= 0, not '-1'"),
        (["deviceID": "d", "memoryGiB": "inf"], "memoryGiB must be a finite number >= 0, not 'inf'"),
        (["deviceID": "d", "memoryGiB": "nan"], "memoryGiB must be a finite number >= 0, not 'nan'"),
        (["deviceID": "d", "memoryGiB": "0x10"], "memoryGiB must be a finite number >= 0, not '0x10'"),
        (["deviceID": "d", "memoryGiB": "1e999"], "memoryGiB must be a finite number >= 0, not '1e999'"),
        (["deviceID": "d", "foo": "1"], "unknown parameter 'foo'"),
        (["deviceID": "d", "deviceclass": "tv"], "unknown parameter 'deviceclass' (did you mean 'deviceClass'?)"),
        (["deviceID": "d", "memory": "4"], "unknown parameter 'memory' (did you mean 'memoryGiB'?)"),
        (["deviceID": "d", "Custom.x": "4"], "unknown parameter 'Custom.x' (did you mean 'custom.x'?)"),
        (["deviceID": "d", "custom.": "v"], "custom attribute name '' must be 1 to 64 of A-Z a-z 0-9 _ . -"),
        (["deviceID": "d", "custom.a b": "v"], "custom attribute name 'a b' must be 1 to 64 of A-Z a-z 0-9 _ . -"),
        (["deviceID": "d", "custom." + String(repeating: "n", count: 65): "v"],
         "custom attribute name '\(String(repeating: "n", count: 60))…' must be 1 to 64 of A-Z a-z 0-9 _ . -"),
        (["deviceID": "d", "custom.x": String(repeating: "v", count: 201)], "'custom.x' is longer than 200 characters"),
        (["deviceID": "d", "osName": String(repeating: "v", count: 201)], "'osName' is longer than 200 characters"),
        (["deviceID": "a\nb"], "'deviceID' contains control character U+000A"),
        (["deviceID": "d", "custom.x": "a\u{202E}b"], "'custom.x' contains control character U+202E"),
        (["deviceID": "d", "os\u{0}Name": "v"], "a parameter name contains control character U+0000"),
    ] as [([String: String], String)])
    func queryRefused(query: [String: String], reason: String) {
        #expect(Self.refusal(query: query) == reason)
    }

    // MARK: Robustness

    @Test("garbage and damaged conditions either parse to a condition that round-trips or are refused in one line")
    func mutations() throws {
        var random = SplitMix64(state: 2024)  // seeded, so that a failure can be reproduced
        let pieces: [String] = [
            "=", "!", "!=", "<", "<=", ">", ">=", ";", ",", " ", "*", "%", ".", "-", "_", "0", "1", "9", "17", "a", "Z",
            "custom.", "osVersion", "rollout", "language", "en", "memory", "region", "US", "é", "\u{301}", "👩‍💻", "\u{7}",
            "\u{202E}", "ൎ", "999999", "1000000", "100", "0.01",
        ]
        var inputs: [String] = []
        for valid in Self.normalisations.map(\.0) + ["osVersion>=17; osVersion<18; rollout=12.5"] {
            let scalars = Array(valid.unicodeScalars)
            for length in 0...scalars.count { inputs.append(String(String.UnicodeScalarView(scalars.prefix(length)))) }
            for _ in 0..<40 {
                var mutated = scalars
                for _ in 0...Int.random(in: 0...2, using: &random) {
                    let piece = Array(pieces.randomElement(using: &random)!.unicodeScalars)
                    let at = Int.random(in: 0...mutated.count, using: &random)
                    switch Int.random(in: 0...2, using: &random) {
                    case 0: mutated.insert(contentsOf: piece, at: at)
                    case 1 where at < mutated.count: mutated.remove(at: at)
                    default: mutated.replaceSubrange(at..<min(mutated.count, at + 1), with: piece)
                    }
                }
                inputs.append(String(String.UnicodeScalarView(mutated)))
            }
        }
        for _ in 0..<2000 {
            inputs.append((0..<Int.random(in: 0...12, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined())
        }
        var parsed = 0
        for input in inputs {
            let condition: TargetingCondition
            do throws(TargetingError) {
                condition = try TargetingCondition(parsing: input)
            } catch {
                #expect(!error.reason.isEmpty && TargetingText.firstForbidden(in: error.reason) == nil,
                        "\(input.debugDescription) → \(error.reason.debugDescription)")
                continue
            }
            parsed += 1
            _ = condition.matches(Self.tablet, bucket: 0)
            do throws(TargetingError) {
                let again = try TargetingCondition(parsing: condition.text)
                #expect(again.clauses == condition.clauses && again.text == condition.text, "\(input.debugDescription)")
            } catch {
                Issue.record("\(input.debugDescription) normalised to \(condition.text.debugDescription), which is refused: \(error.reason)")
            }
        }
        #expect(parsed > 100 && parsed < inputs.count, "\(parsed) of \(inputs.count) parsed")
    }
}

@Suite("Device query decoding")
struct DeviceQueryTests {
    @Test("form decoding: + and %XX, bad escapes and non-UTF-8 refused, repeats refused")
    func decoding() throws {
        #expect(try DeviceQuery.parse("deviceID=a+b%2Fc&custom.x=%C3%A9t%C3%A9") == ["deviceID": "a b/c", "custom.x": "été"])
        #expect(try DeviceQuery.parse(nil) == [:])
        #expect(try DeviceQuery.parse("flag") == ["flag": ""])
        #expect(DeviceQuery.decode("%4") == nil)
        #expect(DeviceQuery.decode("%zz") == nil)
        #expect(DeviceQuery.decode("%FF") == nil)
        #expect(DeviceQuery.decode("100%25") == "100%")
        #expect(throws: TargetingError.self) { try DeviceQuery.parse("a=1&a=2") }
        #expect(throws: TargetingError.self) { try DeviceQuery.parse("a=%zz") }
        #expect(throws: TargetingError.self) { try DeviceQuery.parse(String(repeating: "a", count: 8193)) }
        #expect(throws: TargetingError.self) { try DeviceQuery.parse((0..<65).map { "k\($0)=v" }.joined(separator: "&")) }
    }
}

@Suite("Device HTTP Basic credentials")
struct BasicCredentialsTests {
    @Test("parsed from the header; anything else refused")
    func parsing() {
        let encoded = Data("4A1C1AC4-0000-4000-8000-000000000001:cfa_secret:with:colons".utf8).base64EncodedString()
        let parsed = ManifestEndpoint.basicCredentials("Basic " + encoded)
        #expect(parsed?.0 == "4A1C1AC4-0000-4000-8000-000000000001" && parsed?.1 == "cfa_secret:with:colons")
        #expect(ManifestEndpoint.basicCredentials("bAsIc " + encoded)?.1 == "cfa_secret:with:colons")
        for bad in [nil, "", "Basic", "Basic ", "Bearer " + encoded, "Basic !!!", "Basic " + Data("no colon".utf8).base64EncodedString(),
                    "Basic " + String(repeating: "A", count: 2000)] {
            #expect(ManifestEndpoint.basicCredentials(bad) == nil, "\(bad ?? "nil")")
        }
    }
}
