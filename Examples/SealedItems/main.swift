import Foundation
import GRDB
import SealedFields

let help = """
    usage: sealed-items [--db PATH] COMMAND

    Commands:
      create NAME IDENTIFIER   add an item (created now)
      list                     list items, oldest first
      search NAME              items whose name is exactly NAME (blind index)
      change-passphrase        re-wrap the keys under a new passphrase (rows untouched)
      rotate                   new data key, re-encrypt every row, retire the old key

    The database is items.sqlite in the current folder unless --db says otherwise.
    The passphrase is read from SEALED_ITEMS_PASSPHRASE, else prompted for on the terminal (no echo),
    else read as one line of standard input; the new one for change-passphrase from
    SEALED_ITEMS_NEW_PASSPHRASE or the next prompt/line. Never pass a passphrase as an argument:
    other users see arguments in `ps`.
    """

func run(_ arguments: [String]) throws {
    var arguments = arguments
    var path = "items.sqlite"
    if arguments.first == "--db", arguments.count >= 2 {
        path = arguments[1]
        arguments.removeFirst(2)
    }
    guard let command = arguments.first, !["-h", "--help", "help"].contains(command) else {
        print(help)
        return
    }
    let arity = ["create": 3, "list": 1, "search": 2, "change-passphrase": 1, "rotate": 1]
    guard arity[command] == arguments.count else {
        throw UsageError("unknown command or wrong arguments; see sealed-items --help")
    }
    let dbQueue = try DatabaseQueue(path: path)
    let passphrase = try Passphrase.read(environment: "SEALED_ITEMS_PASSPHRASE", prompt: "Passphrase: ")
    // Open the keys first: a wrong passphrase stops here, before any migration writes to the file.
    let store = try SealedFieldsStore(dbQueue, key: .passphrase(passphrase))
    try Item.migrator.migrate(dbQueue)
    let formatter = ISO8601DateFormatter()

    switch (command, arguments.count) {
    case ("create", 3):
        let item = Item(id: UUID(), name: arguments[1], identifier: arguments[2], creationDate: Date())
        try dbQueue.write { try item.insert($0) }
        print("created \(item.id)")
    case ("list", 1):
        for item in try dbQueue.read({ try Item.order(Column("rowid")).fetchAll($0) }) {
            print("\(formatter.string(from: item.creationDate))  \(item.identifier)  \(item.name)")
        }
    case ("search", 2):
        for item in try dbQueue.read({ try Item.filter(sealed: "name", equals: arguments[1]).fetchAll($0) }) {
            print("\(formatter.string(from: item.creationDate))  \(item.identifier)  \(item.name)")
        }
    case ("change-passphrase", 1):
        let new = try Passphrase.read(environment: "SEALED_ITEMS_NEW_PASSPHRASE", prompt: "New passphrase: ")
        try store.changePassphrase(from: passphrase, to: new)
        print("passphrase changed; rows untouched")
    case ("rotate", 1):
        let old = store.keyVersions
        let version = try store.rotate()
        let done = try store.reencrypt(Item.self, batchSize: 200) { progress in
            FileHandle.standardError.write(Data("re-encrypted \(progress.rowsDone)/\(progress.rowsTotal)\n".utf8))
            return true
        }
        if done.isFinished { for version in old { try store.retire(version: version) } }
        print("data key \(version) now writes; retired \(old.map(String.init).joined(separator: ", "))")
    default:
        throw UsageError("unknown command or wrong arguments; see sealed-items --help")
    }
}

do {
    try run(Array(CommandLine.arguments.dropFirst()))
} catch {
    FileHandle.standardError.write(Data("sealed-items: \(error)\n".utf8))
    exit(error is UsageError ? 64 : 1)
}
