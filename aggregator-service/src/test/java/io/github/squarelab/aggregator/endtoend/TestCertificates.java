package io.github.squarelab.aggregator.endtoend;

import java.io.IOException;
import java.io.StringWriter;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.concurrent.atomic.AtomicLong;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.openssl.jcajce.JcaPKCS8Generator;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * A throwaway CA and the certificates it signs, as PEM files (keys readable by the owner only) in a folder of the
 * test's own: what an operator would mount, made in the test so that none is ever committed.
 */
final class TestCertificates {

    private static final AtomicLong SERIAL = new AtomicLong(System.currentTimeMillis());

    private final Path folder;
    private final String name;
    private final KeyPair key;
    private final X509Certificate certificate;

    private TestCertificates(Path folder, String name, KeyPair key, X509Certificate certificate) {
        this.folder = folder;
        this.name = name;
        this.key = key;
        this.certificate = certificate;
    }

    /** A CA of its own, valid for a day, written as {@code <name>.pem}. */
    static TestCertificates authority(Path folder, String name) throws Exception {
        KeyPair key = keyPair();
        X500Name subject = new X500Name("CN=" + name);
        X509v3CertificateBuilder builder = builder(subject, subject, key, Instant.now(), Duration.ofDays(1))
                .addExtension(Extension.basicConstraints, true, new BasicConstraints(0))
                .addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
        TestCertificates authority = new TestCertificates(folder, name, key, sign(builder, key.getPrivate()));
        authority.write();
        return authority;
    }

    /** A certificate this CA signs for 127.0.0.1 and localhost, valid for a day. */
    TestCertificates issue(String issued) throws Exception {
        return issue(issued, "127.0.0.1", Instant.now().minus(Duration.ofMinutes(5)), Duration.ofDays(1));
    }

    /**
     * @param host the IP address or DNS name the certificate is for
     * @param notBefore when it becomes valid; with a short lifetime, one that has already expired
     */
    TestCertificates issue(String issued, String host, Instant notBefore, Duration lifetime) throws Exception {
        KeyPair issuedKey = keyPair();
        GeneralName hostName = host.chars().allMatch(c -> Character.isDigit(c) || c == '.')
                ? new GeneralName(GeneralName.iPAddress, host)
                : new GeneralName(GeneralName.dNSName, host);
        X509v3CertificateBuilder builder = builder(
                        new X500Name("CN=" + name), new X500Name("CN=" + issued), issuedKey, notBefore, lifetime)
                .addExtension(Extension.basicConstraints, true, new BasicConstraints(false))
                .addExtension(Extension.subjectAlternativeName, false, new GeneralNames(hostName));
        TestCertificates certificates =
                new TestCertificates(folder, issued, issuedKey, sign(builder, key.getPrivate()));
        certificates.write();
        return certificates;
    }

    /** The certificate, PEM. */
    Path certificate() {
        return folder.resolve(name + ".pem");
    }

    /** The private key, PKCS #8 PEM, readable by the owner only. */
    Path privateKey() {
        return folder.resolve(name + ".key");
    }

    private void write() throws IOException {
        Files.writeString(certificate(), pem(certificate));
        Path keyFile = privateKey();
        Files.deleteIfExists(keyFile);
        Files.createFile(keyFile, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        Files.writeString(keyFile, pem(new JcaPKCS8Generator(key.getPrivate(), null)));
    }

    private static String pem(Object object) throws IOException {
        StringWriter text = new StringWriter();
        try (JcaPEMWriter writer = new JcaPEMWriter(text)) {
            writer.writeObject(object);
        }
        return text.toString();
    }

    private static KeyPair keyPair() throws Exception {
        KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
        generator.initialize(256);
        return generator.generateKeyPair();
    }

    private static JcaX509v3CertificateBuilder builder(
            X500Name issuer, X500Name subject, KeyPair key, Instant notBefore, Duration lifetime) {
        return new JcaX509v3CertificateBuilder(
                issuer,
                BigInteger.valueOf(SERIAL.incrementAndGet()),
                Date.from(notBefore),
                Date.from(notBefore.plus(lifetime)),
                subject,
                key.getPublic());
    }

    private static X509Certificate sign(X509v3CertificateBuilder builder, PrivateKey signer) throws Exception {
        return new JcaX509CertificateConverter()
                .getCertificate(builder.build(new JcaContentSignerBuilder("SHA256withECDSA").build(signer)));
    }
}
