// SPDX-License-Identifier: MIT
// Contracts for Latch's SIWE tests only: a smart-contract wallet that answers ERC-1271 for its
// owner's key, and a CREATE2 factory, so a wallet can sign before it exists (ERC-6492).
// Regenerate test-wallet.json with `npx tsx server/src/siwe/contracts/compile.ts`.
pragma solidity 0.8.37;

contract TestWallet {
    address public immutable owner;

    constructor(address owner_) {
        owner = owner_;
    }

    /// ERC-1271: the magic value when `signature` is the owner's over `hash`.
    function isValidSignature(bytes32 hash, bytes calldata signature) external view returns (bytes4) {
        if (signature.length != 65) return 0xffffffff;
        bytes32 r = bytes32(signature[0:32]);
        bytes32 s = bytes32(signature[32:64]);
        uint8 v = uint8(signature[64]);
        address signer = ecrecover(hash, v, r, s);
        return signer != address(0) && signer == owner ? bytes4(0x1626ba7e) : bytes4(0xffffffff);
    }
}

contract TestWalletFactory {
    /// Deploys the owner's wallet at its CREATE2 address (the counterfactual one until then).
    function deploy(address owner, bytes32 salt) external returns (address) {
        return address(new TestWallet{salt: salt}(owner));
    }
}
