/// Answers of a Ceph RADOS Gateway 16.2 (captured from .ci/rgw-start.sh's store on 2026-11-24), and
/// two in the form of AWS's documentation where the gateway's own could not be had in one request:
/// a CompleteMultipartUploadResult, and the 200 answer with an `<Error>` body after the whitespace
/// S3 sends while it assembles the parts.
enum ResponseSamples {
    static let initiate = #"<?xml version="1.0" encoding="UTF-8"?><InitiateMultipartUploadResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Bucket>sample-bucket</Bucket><Key>big.bin</Key><UploadId>2~oziYIA79FhxETkjnBKWjo-aQ25sql3M</UploadId></InitiateMultipartUploadResult>"#

    static let uploadsPage = #"<?xml version="1.0" encoding="UTF-8"?><ListMultipartUploadsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Bucket>sample-bucket</Bucket><NextKeyMarker>big.bin</NextKeyMarker><NextUploadIdMarker>2~oziYIA79FhxETkjnBKWjo-aQ25sql3M</NextUploadIdMarker><MaxUploads>1</MaxUploads><IsTruncated>true</IsTruncated><Upload><Key>big.bin</Key><UploadId>2~oziYIA79FhxETkjnBKWjo-aQ25sql3M</UploadId><Initiator><ID>coffer-ci</ID><DisplayName>coffer-ci</DisplayName></Initiator><Owner><ID>coffer-ci</ID><DisplayName>coffer-ci</DisplayName></Owner><StorageClass>STANDARD</StorageClass><Initiated>2026-11-24T21:58:40.488Z</Initiated></Upload></ListMultipartUploadsResult>"#

    static let listing = #"<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>sample-bucket</Name><Prefix></Prefix><MaxKeys>2</MaxKeys><IsTruncated>false</IsTruncated><Contents><Key>a&amp;b&lt;c</Key><LastModified>2026-11-24T21:58:40.380Z</LastModified><ETag>&quot;5d41402abc4b2a76b9719d911017c592&quot;</ETag><Size>5</Size><StorageClass>STANDARD</StorageClass><Type>Normal</Type></Contents><Contents><Key>dir/x.bin</Key><LastModified>2026-11-24T21:58:40.386Z</LastModified><ETag>&quot;5eb63bbbe01eeed093cb22bb8f5acdc3&quot;</ETag><Size>11</Size><StorageClass>STANDARD</StorageClass><Type>Normal</Type></Contents><KeyCount>2</KeyCount></ListBucketResult>"#

    static let truncatedListing = #"<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>sample-bucket</Name><Prefix></Prefix><MaxKeys>1</MaxKeys><IsTruncated>true</IsTruncated><Contents><Key>dir/x.bin</Key><LastModified>2026-11-24T21:58:40.386Z</LastModified><ETag>&quot;5eb63bbbe01eeed093cb22bb8f5acdc3&quot;</ETag><Size>11</Size></Contents><NextContinuationToken>dir/x.bin</NextContinuationToken><KeyCount>1</KeyCount></ListBucketResult>"#

    static let noSuchKey = #"<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchKey</Code><Message></Message><BucketName>sample-bucket</BucketName><RequestId>tx0000015c41351a090a208-006b060890-100a-default</RequestId><HostId>100a-default-default</HostId></Error>"#

    static let signatureDoesNotMatch = #"<?xml version="1.0" encoding="UTF-8"?><Error><Code>SignatureDoesNotMatch</Code><Message></Message><RequestId>tx00000bb9e19e022f42a08-006b060890-100a-default</RequestId><HostId>100a-default-default</HostId></Error>"#

    static let completed = #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n" + #"<CompleteMultipartUploadResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Location>http://127.0.0.1/sample-bucket/big.bin</Location><Bucket>sample-bucket</Bucket><Key>big.bin</Key><ETag>&quot;3858f62230ac3c915f300c664312c11f-9&quot;</ETag></CompleteMultipartUploadResult>"#

    static let completedWithError = "\n\n\n" + #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n" + #"<Error><Code>InternalError</Code><Message>We encountered an internal error. Please try again.</Message><RequestId>656c76696e6727732072657175657374</RequestId><HostId>Uuag1LuByRx9e6j5Onimru9pO4ZVKnJ2Qz7/C1NPcfTWAtRPfTaOFg==</HostId></Error>"#

    static let partsPage = #"<?xml version="1.0" encoding="UTF-8"?><ListPartsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Bucket>sample-bucket</Bucket><Key>big.bin</Key><UploadId>2~oziYIA79FhxETkjnBKWjo-aQ25sql3M</UploadId><StorageClass>STANDARD</StorageClass><PartNumberMarker>0</PartNumberMarker><NextPartNumberMarker>2</NextPartNumberMarker><MaxParts>2</MaxParts><IsTruncated>true</IsTruncated><Owner><ID>coffer-ci</ID><DisplayName>coffer-ci</DisplayName></Owner><Part><LastModified>2026-11-24T21:58:41.100Z</LastModified><PartNumber>1</PartNumber><ETag>&quot;5d41402abc4b2a76b9719d911017c592&quot;</ETag><Size>8388608</Size></Part><Part><LastModified>2026-11-24T21:58:40.900Z</LastModified><PartNumber>2</PartNumber><ETag>&quot;5eb63bbbe01eeed093cb22bb8f5acdc3&quot;</ETag><Size>8388608</Size></Part></ListPartsResult>"#

    static let noParts = #"<?xml version="1.0" encoding="UTF-8"?><ListPartsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Bucket>sample-bucket</Bucket><Key>big.bin</Key><UploadId>2~oziYIA79FhxETkjnBKWjo-aQ25sql3M</UploadId><PartNumberMarker>0</PartNumberMarker><NextPartNumberMarker>0</NextPartNumberMarker><MaxParts>1000</MaxParts><IsTruncated>false</IsTruncated></ListPartsResult>"#

    static let all = [initiate, uploadsPage, listing, truncatedListing, noSuchKey, signatureDoesNotMatch, completed, completedWithError, partsPage, noParts]
}
