// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @title Latch's EIP-7702 delegate
/// @notice An in-app wallet's account delegates to this code so that anyone (the app's sponsor)
/// may submit a batch of calls the account's own key signed, and pay its gas. The code runs at
/// the account's address, so `address(this)` is the account: a batch acts only when the key of
/// that address signed it (EIP-712, bound to the chain, the account, a nonce and a deadline).
/// Called at its own deployed address, no key exists for it and nothing ever verifies.
/// It has no owner, no upgrade, no fallback: besides `execute`, it only receives ETH and tokens
/// as an account does and answers ERC-1271 for signatures of the account's key.
contract LatchDelegate {
    struct Call {
        address to;
        uint256 value;
        bytes data;
    }

    /// ERC-7201 slot of the batch nonce: keccak256(abi.encode(uint256(keccak256("latch.delegate.nonce")) - 1)) & ~0xff.
    /// A namespaced slot, since the account's storage outlives any delegation it sets.
    bytes32 private constant NONCE_SLOT = 0x30303820efb71652358c71e921354ad7932c82d00e4b49bf6446c6e6d98cfe00;
    /// ERC-7201 slot (transient) of the reentrancy lock: the same formula over "latch.delegate.lock".
    bytes32 private constant LOCK_SLOT = 0x87460e48bbab0bde7a06d01fb87e182bf127d8466b484846f70a69057d499100;

    bytes32 private constant DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");
    bytes32 private constant NAME_HASH = keccak256("LatchDelegate");
    bytes32 private constant VERSION_HASH = keccak256("1");
    bytes32 private constant CALL_TYPEHASH = keccak256("Call(address to,uint256 value,bytes data)");
    bytes32 private constant BATCH_TYPEHASH =
        keccak256("Batch(Call[] calls,uint256 nonce,uint256 deadline)Call(address to,uint256 value,bytes data)");

    /// secp256k1n / 2: a higher s is the malleable twin of a valid signature.
    uint256 private constant HALF_N = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0;

    error Expired();
    error BadNonce(uint256 expected);
    error BadSignature();
    error Reentered();
    error CallFailed(uint256 index, bytes reason);

    event BatchExecuted(uint256 indexed nonce, bytes32 digest);

    /// Runs `calls` in order, all or none, when the account's key signed them with `nonce` (the
    /// account's next) and `deadline` (unix seconds, inclusive) on this chain for this account.
    function execute(Call[] calldata calls, uint256 nonce, uint256 deadline, bytes calldata signature)
        external
    {
        bool locked;
        assembly {
            locked := tload(LOCK_SLOT)
        }
        if (locked) revert Reentered();
        if (block.timestamp > deadline) revert Expired();
        uint256 expected;
        assembly {
            expected := sload(NONCE_SLOT)
        }
        if (nonce != expected) revert BadNonce(expected);
        bytes32 digest = batchDigest(calls, nonce, deadline);
        if (recover(digest, signature) != address(this)) revert BadSignature();

        assembly {
            sstore(NONCE_SLOT, add(expected, 1))
            tstore(LOCK_SLOT, 1)
        }
        for (uint256 i = 0; i < calls.length; ++i) {
            Call calldata c = calls[i];
            (bool ok, bytes memory reason) = c.to.call{value: c.value}(c.data);
            if (!ok) revert CallFailed(i, reason);
        }
        assembly {
            tstore(LOCK_SLOT, 0)
        }
        emit BatchExecuted(nonce, digest);
    }

    /// The nonce the account's next batch must carry.
    function batchNonce() external view returns (uint256 n) {
        assembly {
            n := sload(NONCE_SLOT)
        }
    }

    /// The EIP-712 digest the account's key signs for a batch.
    function batchDigest(Call[] calldata calls, uint256 nonce, uint256 deadline) public view returns (bytes32) {
        bytes32[] memory hashes = new bytes32[](calls.length);
        for (uint256 i = 0; i < calls.length; ++i) {
            hashes[i] = keccak256(abi.encode(CALL_TYPEHASH, calls[i].to, calls[i].value, keccak256(calls[i].data)));
        }
        bytes32 structHash =
            keccak256(abi.encode(BATCH_TYPEHASH, keccak256(abi.encodePacked(hashes)), nonce, deadline));
        bytes32 domain = keccak256(abi.encode(DOMAIN_TYPEHASH, NAME_HASH, VERSION_HASH, block.chainid, address(this)));
        return keccak256(abi.encodePacked(hex"1901", domain, structHash));
    }

    /// ERC-1271: a contract-aware verifier asks the account's code, and the answer is the key's.
    function isValidSignature(bytes32 hash, bytes calldata signature) external view returns (bytes4) {
        return recover(hash, signature) == address(this) ? bytes4(0x1626ba7e) : bytes4(0xffffffff);
    }

    /// An account receives ETH and safe token transfers as it did before delegating.
    receive() external payable {}

    function onERC721Received(address, address, uint256, bytes calldata) external pure returns (bytes4) {
        return this.onERC721Received.selector;
    }

    function onERC1155Received(address, address, uint256, uint256, bytes calldata) external pure returns (bytes4) {
        return this.onERC1155Received.selector;
    }

    function onERC1155BatchReceived(address, address, uint256[] calldata, uint256[] calldata, bytes calldata)
        external
        pure
        returns (bytes4)
    {
        return this.onERC1155BatchReceived.selector;
    }

    /// The signer of `digest` (65 bytes r, s, v; low s), or zero.
    function recover(bytes32 digest, bytes calldata signature) private pure returns (address) {
        if (signature.length != 65) return address(0);
        bytes32 r = bytes32(signature[0:32]);
        bytes32 s = bytes32(signature[32:64]);
        uint8 v = uint8(signature[64]);
        if (uint256(s) > HALF_N || (v != 27 && v != 28)) return address(0);
        return ecrecover(digest, v, r, s);
    }
}
