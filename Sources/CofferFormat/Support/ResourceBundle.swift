import Foundation

/// This target's resource bundle (its privacy manifest), for the tests that check it ships.
package var formatResourceBundle: Bundle { .module }
